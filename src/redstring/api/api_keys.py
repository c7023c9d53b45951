"""API keys: the key file `redstring keys` manages, and the verifier that reads it.

A key reads `rs_<id>_<secret>`: `id` is public (12 hex digits, shown by
`keys list`) and finds the key's record without trying every hash; `secret` is
32 random bytes. The file keeps, per key, only the SHA-256 of the whole key,
its tenants, role, name and creation time: a stolen file grants nothing. A
plain hash (no salt, no stretching) suffices because the secret is random and
high-entropy, not a password; digests are compared in constant time.

The file is JSON, rewritten whole through a temporary file and `os.replace`,
so a running server never reads half of it, and synced (the file before the
replace, its folder after), so a change survives a crash once it returns. The new file keeps the mode, owner
and group of the one it replaces as far as the process may set them (a new file
is 0600): a server running as another user of the file's group keeps reading it.
Where the process may not, the change logs a WARNING (logger `redstring.api`)
naming the old owner and the new, which `redstring keys` prints. A key file named through
a symbolic link is the file the link names: that file is locked and replaced, and
the link stays, so a server reading either path sees every change. The verifier checks the
file's `stat` on each request and reads it again when it changed, so a revoked
key stops working at once, without a restart.

`add_key`, `revoke_key` and `write_key_file` lock the key file itself with POSIX
`fcntl.flock`, so whoever may read and replace it may change it, with no lock file of
its own whose owner or mode could shut out another writer
(docs/adr/0011-key-file-locks-itself.md). Whoever may read the file may hold that lock:
a change waits for it a bounded time (`timeout`, 30 s by default), says so once when it
begins to (`on_wait`, else a log line), and gives up with `KeyFileBusyError`, nothing
changed. On a platform without `fcntl` (Windows, which redstring does not claim) they
refuse with an `OSError` before touching anything, while reading keys and serving work
as anywhere. What is at the path and is not a regular file (a FIFO) is refused, by
changes and reads alike, without waiting for a writer.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import hmac
import logging
import math
import os
import re
import secrets
import stat
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal, TypeVar
from uuid import UUID

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from redstring.api.authorization import Caller, Role
from redstring.api.credentials import CredentialsRefusedError
from redstring.api.errors import describe_validation_error
from redstring.api.watched_file import (
    FileSignature,
    Signature,
    WatchedFile,
    read_regular_file,
)
from redstring.domain.errors import InvalidInputError, RedstringError
from redstring.domain.ids import TenantId

logger = logging.getLogger("redstring.api")

KEY_PREFIX = "rs"
_KEY_SHAPE = re.compile(rf"^{KEY_PREFIX}_(?P<id>[0-9a-f]{{12}})_(?P<secret>[A-Za-z0-9_-]{{16,}})$")

DEFAULT_LOCK_TIMEOUT = 30.0
"""Seconds a change waits, by default, for the key file's lock held by another process."""


class KeyRecord(BaseModel):
    """One key as the file keeps it: never the key itself, only its SHA-256."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(pattern=r"^[0-9a-f]{12}$")
    name: str = ""
    role: Role
    tenants: tuple[UUID, ...] = Field(min_length=1)
    created: datetime
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")

    def caller(self) -> Caller:
        """The caller this key proves."""
        return Caller(
            subject=f"key {self.id}",
            tenants=frozenset(TenantId(t) for t in self.tenants),
            role=self.role,
        )


class KeyFileContent(BaseModel):
    """The whole key file."""

    model_config = ConfigDict(extra="forbid")

    version: Literal[1] = 1
    keys: tuple[KeyRecord, ...] = ()


class UnknownKeyError(InvalidInputError):
    """No key of the file has this id."""


class KeyFileError(InvalidInputError):
    """The key file cannot be read, or what is at its path is no key file (not a regular
    file, or not the JSON of one): the file is at fault, not the arguments of the call.
    An `InvalidInputError`, which a server reading the file refuses its keys for."""


def key_digest(key: str) -> str:
    """The SHA-256 (hex) the file keeps for `key`."""
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def key_id_of(key: str) -> str | None:
    """The public id of a well-formed key, else `None`."""
    match = _KEY_SHAPE.match(key)
    return match["id"] if match else None


def read_key_file(path: Path, *, missing: bool = False) -> KeyFileContent:
    """The keys in `path`; `KeyFileError` when it cannot be read or is not a key file, as
    whatever is not a regular file (a FIFO) is, refused without waiting for a writer.
    Given `missing`, a file that does not exist is refused as `_missing` says."""
    try:
        raw = read_regular_file(path)
    except FileNotFoundError as exc:
        raise (_missing(path) if missing else _unreadable(path, exc)) from None
    except OSError as exc:
        raise _unreadable(path, exc) from None
    if raw is None:
        raise _not_regular(path)
    return _parsed(raw, path)


def _unreadable(path: Path, exc: OSError) -> KeyFileError:
    return KeyFileError(f"cannot read the API key file {path}: {exc.strerror}")


def _missing(path: Path) -> KeyFileError:
    """A key file to list or change that does not exist: a path's typo, most likely, which
    must not look like a file of no keys (only `add_key` makes the file)."""
    return KeyFileError(f"the API key file {path} does not exist (keys add creates it)")


def _not_regular(path: Path) -> KeyFileError:
    return KeyFileError(f"{path} is not an API key file: not a regular file")


def _parsed(raw: bytes, path: Path) -> KeyFileContent:
    """The keys `raw`, read from `path`, holds; `KeyFileError` when it is not a key file."""
    try:
        return KeyFileContent.model_validate_json(raw)
    except ValidationError as exc:
        detail = describe_validation_error(exc)
        raise KeyFileError(f"{path} is not an API key file: {detail}") from None


def _real_path(path: Path) -> Path:
    """`path` with every symbolic link followed: the file a change must replace (replacing
    a link would leave its target, the file a server may read, as it was)."""
    return Path(os.path.realpath(path))


_Owner = tuple[int, int]
"""A file's user and group ids."""


def _keep_access(descriptor: int, target: Path) -> tuple[_Owner, _Owner] | None:
    """Give the new file open at `descriptor` the mode, owner and group of the file at
    `target` it is to replace, or mode 0600 when there is none; the old owner and the
    new when they differ.

    Where the process may not set the owner (only root gives a file away), the file is
    its own; where it may not set the group either (one it is not in), the old mode's
    group permissions are dropped, as they would go to another group."""
    try:
        old = os.stat(target)
    except FileNotFoundError:
        os.fchmod(descriptor, 0o600)
        return None
    mode = stat.S_IMODE(old.st_mode) & 0o777
    new = os.fstat(descriptor)
    if (new.st_uid, new.st_gid) != (old.st_uid, old.st_gid):
        for uid in (old.st_uid, -1):  # owner and group, else the group alone
            with contextlib.suppress(OSError):
                os.fchown(descriptor, uid, old.st_gid)
                break
        new = os.fstat(descriptor)
        if new.st_gid != old.st_gid:
            mode &= ~0o070
    os.fchmod(descriptor, mode)
    before, after = (old.st_uid, old.st_gid), (new.st_uid, new.st_gid)
    return None if before == after else (before, after)


def _name_owner(owner: _Owner) -> str:
    """`user:group`, each by its name where it has one, else its id."""
    import grp  # POSIX only, as file owners are: imported here so the server imports anywhere
    import pwd

    uid, gid = owner
    try:
        user = pwd.getpwuid(uid).pw_name
    except KeyError:
        user = str(uid)
    try:
        group = grp.getgrgid(gid).gr_name
    except KeyError:
        group = str(gid)
    return f"{user}:{group}"


def _exposure(
    signature: FileSignature, user: int | None = None, groups: frozenset[int] | None = None
) -> str | None:
    """What a key file's mode lets others do that the server (running as `user` in
    `groups`, by default this process's) does not need, and how to stop it; None when
    nothing. Every user's access is always too much, but a server that is neither the
    file's owner nor in its group (nor root) reads it so: it must be given the file
    first. The group's read is not too much when the server reads the file through
    its group (`0640` for a server in the file's group); its write always is."""
    user = os.geteuid() if user is None else user
    groups = frozenset((os.getegid(), *os.getgroups())) if groups is None else groups
    mode = signature.mode
    if mode & 0o006:
        if user not in (0, signature.owner) and signature.group not in groups:
            return (
                "open to every user, which is how this server reads it: give it to the "
                "server's user or group (chown or chgrp), then chmod o-rw it"
            )
        return "open to every user; chmod o-rw it"
    if mode & 0o020:
        return "writable by its group; chmod g-w it"
    if mode & 0o040 and signature.owner == user:
        return "readable by its group, which this server, its owner, does not need; chmod g-r it"
    return None


def write_key_file(
    path: Path,
    content: KeyFileContent,
    *,
    timeout: float = DEFAULT_LOCK_TIMEOUT,
    on_wait: Callable[[str], None] | None = None,
) -> None:
    """Replace the file `path` names (through any links) by `content` at once and durably
    (temporary file, fsync, `os.replace`, fsync of the folder), with the old file's mode,
    owner and group where the process may set them (`_keep_access`), mode 0600 for a new
    file. An owner or group it could not keep is logged as a WARNING: a server running
    as the old ones may no longer read the file.

    It holds the file's lock as `add_key` and `revoke_key` do, so neither loses its change
    to it nor it to them, and waits for it as they do."""
    _replace(path, lambda _: (content, None), timeout, on_wait)


def _write(target: Path, content: KeyFileContent, path: Path, *, create: bool = False) -> bool:
    """`write_key_file` of `target`, the real path of `path`, the name its warning says.
    With `create`, the file is made only where there is none (a hard link, which never
    replaces, in place of `os.replace`): False, and nothing written, when there is one."""
    text = content.model_dump_json(indent=2) + "\n"
    descriptor, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as file:
            owners = _keep_access(file.fileno(), target)
            file.write(text)
            file.flush()
            os.fsync(file.fileno())
        if not create:
            os.replace(temporary, target)
        else:
            try:
                os.link(temporary, target)
            except FileExistsError:  # another change made the file first
                os.unlink(temporary)
                return False
            os.unlink(temporary)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    _sync_folder(target.parent)
    if owners is not None:
        before, after = owners
        logger.warning(
            "%s was owned by %s and is now owned by %s, which this user may not change "
            "back: a server running as the old owner or group may no longer read it; chown it",
            path,
            _name_owner(before),
            _name_owner(after),
        )
    return True


def _sync_folder(folder: Path) -> None:
    """Make a replace in `folder` durable: until its entry is synced, a crash may bring
    back the old file, and with it a revoked key."""
    descriptor = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


_FIRST_POLL, _LAST_POLL = 0.01, 0.25  # seconds between tries of a lock held elsewhere

# The errors of a lock the file system does not give (an NFS mount without working locks,
# or NFS refusing an exclusive lock on a file open for reading only), not of one held.
_LOCKS_UNSUPPORTED = frozenset({errno.EBADF, errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOTSUP})


class KeyFileBusyError(RedstringError, TimeoutError):
    """Another process held the key file's lock for longer than a change waits for it;
    nothing was changed. A `TimeoutError`, so an `OSError`, as the key file's other
    failures to be changed are."""


class _LockWait:
    """How long a change may wait for the key file's lock, from its start, and the line
    it says, once, when the lock is held elsewhere: to `on_wait`, else logged at INFO."""

    def __init__(self, path: Path, timeout: float, on_wait: Callable[[str], None] | None) -> None:
        if not timeout >= 0:  # NaN too
            raise InvalidInputError(
                f"a lock timeout is a number of seconds from 0 up, not {timeout}"
            )
        self._path, self._timeout, self._on_wait = path, timeout, on_wait
        self._deadline = time.monotonic() + timeout
        self._said = False

    def _for(self) -> str:
        return "without limit" if math.isinf(self._timeout) else f"up to {self._timeout:g} s"

    def take(self, descriptor: int, writable: bool) -> None:
        """Lock `descriptor` (an exclusive `flock`), trying again with a growing pause
        (`_FIRST_POLL` to `_LAST_POLL`) while another open file of it holds the lock, until
        the deadline: `KeyFileBusyError` then. Polling, not a blocking `flock` interrupted by
        a signal or a thread: it works the same in any thread of any program."""
        import fcntl  # `_locked` found it

        pause = _FIRST_POLL
        while True:
            try:
                fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except BlockingIOError:  # held elsewhere
                pass
            except OSError as exc:
                raise _lock_failed(self._path, exc, writable) from exc
            left = self._deadline - time.monotonic()
            if left <= 0:
                raise KeyFileBusyError(
                    f"gave up after {self._timeout:g} s waiting for the lock of {self._path}, "
                    "which another process holds: nothing changed"
                )
            if not self._said:
                self._said = True
                line = (
                    f"waiting for the lock of {self._path}, which another process holds "
                    f"({self._for()})"
                )
                if self._on_wait is None:
                    logger.info("%s", line)
                else:
                    self._on_wait(line)
            time.sleep(min(pause, left))
            pause = min(pause * 2, _LAST_POLL)


def _lock_failed(path: Path, exc: OSError, writable: bool) -> OSError:
    """The error of a lock refused for another reason than being held, naming the file
    system as the cause where it is one."""
    message = f"cannot lock {path}: {exc.strerror}"
    if exc.errno in _LOCKS_UNSUPPORTED:
        message += "; the key file needs a local file system, or one whose locks work"
        if not writable:
            message += " (NFS locks only a file opened for writing, which this user may not)"
    return OSError(message)


def _open_to_lock(target: Path) -> tuple[int, bool]:
    """A descriptor of the file at `target` to lock, and whether it is open for writing:
    it is where this user may write the file (NFS locks only such a descriptor
    exclusively), else it is open for reading only (a user who may replace the file
    through its folder, not write it, changes it so). Never following a link (`target`
    has none) nor waiting on a FIFO, nor taking a terminal."""
    flags = os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY
    try:
        return os.open(target, os.O_RDWR | flags), True
    except FileNotFoundError:
        raise
    except OSError:  # not writable by this user, a read-only mount, a folder, ...
        return os.open(target, os.O_RDONLY | flags), False


@contextlib.contextmanager
def _locked(target: Path, path: Path, wait: _LockWait) -> Iterator[bytes | None]:
    """Hold an exclusive `flock` of the key file at `target` (the real path of `path`) while
    it is the file there, waiting for it as `wait` says; what it holds, read through the
    locked descriptor, or None when there is no file.

    A change replaces the file only while it holds the lock of the file in place, so one
    change at a time does; a change that waited for the lock of a file replaced meanwhile
    lets it go and tries again (else it would read beside the change holding the new
    file's lock, and one of them would lose the other's key or undo its revocation). A
    missing file is not locked: `_write` makes it with `create`, which refuses when
    another change made it first. The descriptor is `_open_to_lock`'s. `flock`, not
    `fcntl` record locks: the process closing any other descriptor of the file would drop
    those. An `OSError` where `fcntl` is missing, since an unlocked change is not safe."""
    try:
        # POSIX only: imported here so the server imports this module anywhere.
        import fcntl  # noqa: F401 (`_LockWait.take` uses it)
    except ImportError:
        raise OSError(
            f"cannot change {path}: locking it needs POSIX file locks (fcntl), "
            "which this platform lacks; change it on a POSIX system"
        ) from None
    while True:
        try:
            # Looked at before it is opened: opening a FIFO wakes whoever waits at its
            # other end, opening a device may act on it. `fstat` checks again, once open.
            if not stat.S_ISREG(os.stat(target, follow_symlinks=False).st_mode):
                raise _not_regular(path)
            descriptor, writable = _open_to_lock(target)
        except FileNotFoundError:
            yield None
            return
        except OSError as exc:
            raise _unreadable(path, exc) from None
        try:
            held = os.fstat(descriptor)
            if not stat.S_ISREG(held.st_mode):
                raise _not_regular(path)
            wait.take(descriptor, writable)
            if _is_at(held, target):
                with open(descriptor, "rb", closefd=False) as file:
                    try:
                        raw = file.read()
                    except OSError as exc:
                        raise _unreadable(path, exc) from None
                yield raw
                return
        finally:
            os.close(descriptor)


def _is_at(held: os.stat_result, target: Path) -> bool:
    """Whether the file `held` is the one at `target` (not replaced or removed since)."""
    try:
        now = os.stat(target, follow_symlinks=False)
    except FileNotFoundError:
        return False
    return (now.st_dev, now.st_ino) == (held.st_dev, held.st_ino)


Result = TypeVar("Result")


def _replace(
    path: Path,
    make: Callable[[bytes | None], tuple[KeyFileContent, Result]],
    timeout: float,
    on_wait: Callable[[str], None] | None,
) -> Result:
    """Write what `make` makes of the file's bytes (None when there is none) in place of the
    file `path` names, and return its result, the read and the write under the file's lock
    (`_locked`, which waits up to `timeout` seconds for it); `make` runs again on the new
    file when another change made the missing file first."""
    wait = _LockWait(path, timeout, on_wait)
    target = _real_path(path)
    while True:
        with _locked(target, path, wait) as raw:
            content, result = make(raw)
            if _write(target, content, path, create=raw is None):
                return result


def _change(
    path: Path,
    change: Callable[[KeyFileContent], tuple[KeyFileContent, Result]],
    timeout: float,
    on_wait: Callable[[str], None] | None,
) -> Result:
    """`_replace` with `change` of the file's keys (none when there is no file)."""

    def make(raw: bytes | None) -> tuple[KeyFileContent, Result]:
        return change(KeyFileContent() if raw is None else _parsed(raw, path))

    return _replace(path, make, timeout, on_wait)


@dataclass(frozen=True)
class IssuedKey:
    """A key just added: the key itself (shown once) and its record."""

    key: str
    record: KeyRecord


def add_key(
    path: Path,
    tenants: Iterable[TenantId],
    role: Role,
    name: str = "",
    *,
    timeout: float = DEFAULT_LOCK_TIMEOUT,
    on_wait: Callable[[str], None] | None = None,
) -> IssuedKey:
    """Issue a new random key for `tenants` with `role` and add its record to `path`
    (created when missing), as `write_key_file` writes it.

    The file's lock, held by another process, is waited for up to `timeout` seconds
    (`math.inf`: without limit), then `KeyFileBusyError`; `on_wait` is given a line
    saying so when the wait begins (else it is logged at INFO)."""
    granted = tuple(dict.fromkeys(tenants))
    if not granted:
        raise InvalidInputError("a key needs at least one tenant")

    def add(content: KeyFileContent) -> tuple[KeyFileContent, IssuedKey]:
        taken = {record.id for record in content.keys}
        key_id = secrets.token_hex(6)
        while key_id in taken:
            key_id = secrets.token_hex(6)
        key = f"{KEY_PREFIX}_{key_id}_{secrets.token_urlsafe(32)}"
        record = KeyRecord(
            id=key_id,
            name=name,
            role=role,
            tenants=granted,
            created=datetime.now(UTC).replace(microsecond=0),
            sha256=key_digest(key),
        )
        return content.model_copy(update={"keys": (*content.keys, record)}), IssuedKey(key, record)

    return _change(path, add, timeout, on_wait)


def revoke_key(
    path: Path,
    key_id: str,
    *,
    timeout: float = DEFAULT_LOCK_TIMEOUT,
    on_wait: Callable[[str], None] | None = None,
) -> KeyRecord:
    """Remove the key `key_id` from `path`, as `write_key_file` writes it; `UnknownKeyError`
    when there is none, `KeyFileError` when there is no file. The lock is waited for as
    `add_key` says."""

    def revoke(raw: bytes | None) -> tuple[KeyFileContent, KeyRecord]:
        if raw is None:
            raise _missing(path)
        content = _parsed(raw, path)
        gone = [record for record in content.keys if record.id == key_id]
        if not gone:
            raise UnknownKeyError(f"no key with id {key_id!r} in {path}")
        kept = tuple(record for record in content.keys if record.id != key_id)
        return content.model_copy(update={"keys": kept}), gone[0]

    return _replace(path, revoke, timeout, on_wait)


def list_keys(path: Path) -> tuple[KeyRecord, ...]:
    """The records in `path`; `KeyFileError` when there is no file, as when it cannot be
    read."""
    return read_key_file(path, missing=True).keys


def _records_of(path: Path) -> dict[str, KeyRecord]:
    return {record.id: record for record in read_key_file(path).keys}


class ApiKeyVerifier:
    """Checks API keys against the key file, read again whenever its `stat` changes.

    A file that disappears or stops parsing refuses every key (and is logged
    at ERROR) until it is fixed: failing open would revive revoked keys.
    """

    def __init__(self, path: Path) -> None:
        self._path = path  # before the first read, which `_read_now` sees
        self._file: WatchedFile[dict[str, KeyRecord]] = WatchedFile(
            path,
            _records_of,
            empty={},
            refusal="every API key is refused until the key file is fixed",
            on_read=self._read_now,
        )

    def _read_now(self, records: dict[str, KeyRecord], signature: Signature) -> None:
        exposure = None if signature is None else _exposure(signature)
        if exposure is not None:
            logger.warning("the API key file %s is %s", self._path, exposure)
        logger.info("API key file read: %d key(s)", len(records))

    async def verify(self, credential: str) -> Caller:
        """The caller of the key `credential`, or `CredentialsRefusedError`."""
        records = self._file.current()
        key_id = key_id_of(credential)
        if key_id is None:
            raise CredentialsRefusedError("not an API key")
        record = records.get(key_id)
        if record is None:
            raise CredentialsRefusedError(f"no key with id {key_id} (unknown or revoked)")
        if not hmac.compare_digest(record.sha256, key_digest(credential)):
            raise CredentialsRefusedError(f"wrong secret for key {key_id}")
        return record.caller()


def api_key_verifier(path: Path | None) -> ApiKeyVerifier:
    """The verifier of `REDSTRING_API_KEYS_FILE`; `InvalidInputError` when it is unset or
    cannot be read."""
    if path is None:
        raise InvalidInputError(
            "REDSTRING_AUTH=apikey needs REDSTRING_API_KEYS_FILE (create keys with "
            "`redstring keys add --file PATH --tenant ID --role read|write`)"
        )
    return ApiKeyVerifier(path)
