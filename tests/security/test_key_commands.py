"""`redstring keys add|list|revoke`: the key shown once, only its hash kept, clear refusals."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import fcntl
import grp
import hashlib
import io
import json
import logging
import math
import os
import pwd
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from redstring.api.api_keys import (
    ApiKeyVerifier,
    KeyFileBusyError,
    KeyFileContent,
    KeyFileError,
    KeyRecord,
    _exposure,
    _name_owner,
    _write,
    add_key,
    list_keys,
    read_key_file,
    revoke_key,
    write_key_file,
)
from redstring.api.authorization import Role
from redstring.api.cli import main
from redstring.api.credentials import CredentialsRefusedError
from redstring.api.watched_file import FileSignature
from redstring.domain.errors import InvalidInputError
from redstring.domain.ids import TenantId
from tests.processes import child_environment
from tests.security.waiting import ended_within, without_waiting_on

TENANT_A, TENANT_B = str(uuid.uuid4()), str(uuid.uuid4())
KEY_SHAPE = re.compile(r"^rs_([0-9a-f]{12})_[A-Za-z0-9_-]{43}$")


@pytest.fixture
def key_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("REDSTRING_API_KEYS_FILE", raising=False)
    return tmp_path / "keys.json"


def _add(
    key_file: Path, capsys: pytest.CaptureFixture[str], *tenants: str, role: str = "read"
) -> str:
    args = ["keys", "add", "--file", str(key_file), "--role", role, "--name", "ci"]
    for tenant in tenants:
        args += ["--tenant", tenant]
    assert main(args) == 0
    out = capsys.readouterr().out
    return out


def test_add_prints_the_key_alone_and_keeps_only_its_hash(
    key_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = _add(key_file, capsys, TENANT_A, TENANT_B, role="write")
    key = out.removesuffix("\n")
    assert out == key + "\n"
    match = KEY_SHAPE.match(key)
    assert match, out
    text = key_file.read_text(encoding="utf-8")
    secret = key.split("_", 2)[2]
    assert key not in text
    assert secret not in text
    [record] = json.loads(text)["keys"]
    assert record["id"] == match[1]
    assert record["sha256"] == hashlib.sha256(key.encode()).hexdigest()
    assert record["tenants"] == [TENANT_A, TENANT_B]
    assert record["role"] == "write"
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    # Written through a temporary file that is gone afterwards, and locked without a file
    # of its own.
    assert [p.name for p in key_file.parent.iterdir()] == ["keys.json"]


def test_each_key_is_new_and_earlier_keys_are_kept(
    key_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first, second = _add(key_file, capsys, TENANT_A), _add(key_file, capsys, TENANT_A)
    assert first != second
    assert len(json.loads(key_file.read_text())["keys"]) == 2


def test_list_shows_each_key_without_its_hash(
    key_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    key = _add(key_file, capsys, TENANT_A).strip()
    assert main(["keys", "list", "--file", str(key_file)]) == 0
    out = capsys.readouterr().out
    [line] = out.splitlines()
    key_id, name, role, tenants, created = line.split("\t")
    assert key.startswith(f"rs_{key_id}_")
    assert (name, role, tenants) == ("ci", "read", TENANT_A)
    assert created.endswith("Z")
    stored = json.loads(key_file.read_text())["keys"][0]["sha256"]
    assert stored not in out
    assert key.split("_", 2)[2] not in out


def test_revoke_removes_the_key_and_an_unknown_id_is_a_usage_error(
    key_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    kept = _add(key_file, capsys, TENANT_A).strip()
    gone = _add(key_file, capsys, TENANT_B).strip()
    gone_id = KEY_SHAPE.match(gone)[1]  # type: ignore[index]
    assert main(["keys", "revoke", gone_id, "--file", str(key_file)]) == 0
    ids = [r["id"] for r in json.loads(key_file.read_text())["keys"]]
    assert ids == [KEY_SHAPE.match(kept)[1]]  # type: ignore[index]
    capsys.readouterr()
    assert main(["keys", "revoke", gone_id, "--file", str(key_file)]) == 2
    assert f"no key with id '{gone_id}'" in capsys.readouterr().err


@pytest.mark.parametrize(
    "args",
    [["keys", "list"], ["keys", "revoke", "abcdefabcdef"]],
    ids=["list", "revoke"],
)
def test_a_key_file_that_does_not_exist_is_said_so_by_list_and_revoke(
    key_file: Path, capsys: pytest.CaptureFixture[str], args: list[str]
) -> None:
    """A typo in the path looked like an empty file (`no keys in ...`, status 0) or a key
    already revoked (`no key with id ...`, status 2); only `keys add` creates the file."""
    assert main([*args, "--file", str(key_file)]) == 1
    said = " ".join(capsys.readouterr().err.split())
    assert said == f"error: the API key file {key_file} does not exist (keys add creates it)"
    assert not key_file.exists()


def test_list_keys_and_revoke_key_refuse_a_key_file_that_does_not_exist(
    key_file: Path,
) -> None:
    missing = f"the API key file {key_file} does not exist"
    with pytest.raises(KeyFileError, match=re.escape(missing)):
        list_keys(key_file)
    with pytest.raises(KeyFileError, match=re.escape(missing)):
        revoke_key(key_file, "abcdefabcdef")
    assert not key_file.exists()


def test_the_file_comes_from_the_environment_without_file(
    key_file: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REDSTRING_API_KEYS_FILE", str(key_file))
    assert main(["keys", "add", "--tenant", TENANT_A, "--role", "read"]) == 0
    assert KEY_SHAPE.match(capsys.readouterr().out.strip())
    assert key_file.exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["keys", "add", "--tenant", TENANT_A, "--role", "read"], "REDSTRING_API_KEYS_FILE"),
        (["keys", "list"], "REDSTRING_API_KEYS_FILE"),
        (
            ["keys", "add", "--file", "{file}", "--tenant", "acme", "--role", "read"],
            "--tenant must be a UUID, got 'acme'",
        ),
        (
            [
                "keys",
                "add",
                "--file",
                "{file}",
                "--tenant",
                TENANT_A,
                "--role",
                "read",
                "--name",
                "evil\tname\nx",
            ],
            "--name must be printable (no tab, newline or other control character)",
        ),
        (
            [
                "keys",
                "add",
                "--file",
                "/no-such-folder-of-redstring/keys.json",
                "--tenant",
                TENANT_A,
                "--role",
                "read",
            ],
            "folder does not exist",
        ),
        (
            [
                "keys",
                "add",
                "--file",
                "{file}",
                "--tenant",
                TENANT_A,
                "--role",
                "read",
                "--wait",
                "-1",
            ],
            "--wait must be a number of seconds from 0 up, got '-1'",
        ),
        (
            ["keys", "revoke", "0" * 12, "--file", "{file}", "--wait", "soon"],
            "--wait must be a number of seconds from 0 up, got 'soon'",
        ),
        (
            ["keys", "revoke", "0" * 12, "--file", "{file}", "--wait", "nan"],
            "--wait must be a number of seconds from 0 up, got 'nan'",
        ),
    ],
    ids=[
        "no file (add)",
        "no file (list)",
        "tenant not a UUID",
        "name not printable",
        "no folder",
        "negative wait",
        "wait not a number",
        "wait not a number (nan)",
    ],
)
def test_usage_errors_exit_2_with_a_clear_message(
    key_file: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    filled = [str(key_file) if a == "{file}" else a for a in args]
    assert main(filled) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert message in captured.err
    assert not key_file.exists()


@pytest.mark.parametrize("action", ["list", "add", "revoke"])
def test_a_file_that_is_not_a_key_file_is_refused_with_1_and_left_alone(
    key_file: Path, capsys: pytest.CaptureFixture[str], action: str
) -> None:
    """The file is at fault, not the command line (2): as `load` of a file with a bad line."""
    key_file.write_text('{"something": "else"}')
    args = {"list": [], "add": ["--tenant", TENANT_A, "--role", "read"], "revoke": ["0" * 12]}
    assert main(["keys", action, "--file", str(key_file), *args[action]]) == 1
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith(f"error: {key_file} is not an API key file: ")
    assert key_file.read_text() == '{"something": "else"}'


def test_a_role_other_than_read_or_write_is_refused(key_file: Path) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["keys", "add", "--file", str(key_file), "--tenant", TENANT_A, "--role", "admin"])
    assert exit_.value.code == 2


# Without POSIX file locks (fcntl) ---------------------------------------------------------


def test_without_fcntl_the_cli_and_the_app_import_and_the_app_is_built() -> None:
    """The key file's lock is the only user of `fcntl`: the CLI and the app import without
    it (as on Windows)."""
    code = (
        "import sys; sys.modules['fcntl'] = None\n"  # `import fcntl` now fails
        "from redstring.api.app import create_app\n"
        "import redstring.api.cli\n"
        "create_app()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        env=child_environment(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr


def test_without_fcntl_add_and_revoke_refuse_and_change_nothing(
    key_file: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    kept = _add(key_file, capsys, TENANT_A).strip()
    before = key_file.read_bytes()
    monkeypatch.setitem(sys.modules, "fcntl", None)  # `import fcntl` now fails
    refusal = f"error: cannot change {key_file}: locking it needs POSIX file locks (fcntl)"
    args = ["--file", str(key_file)]
    assert main(["keys", "add", *args, "--tenant", TENANT_A, "--role", "read"]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""  # no key issued
    assert refusal in captured.err
    assert main(["keys", "revoke", KEY_SHAPE.match(kept)[1], *args]) == 1  # type: ignore[index]
    assert refusal in capsys.readouterr().err
    assert key_file.read_bytes() == before
    assert [p.name for p in key_file.parent.iterdir()] == ["keys.json"]  # no other file made
    assert main(["keys", "list", *args]) == 0  # reading needs no lock
    assert capsys.readouterr().out.startswith(KEY_SHAPE.match(kept)[1])  # type: ignore[index]


# A key file reached through a symbolic link -----------------------------------------------


@pytest.fixture
def linked_key_file(tmp_path: Path, key_file: Path) -> Path:
    """A link, in another folder, to `key_file` (which does not exist yet)."""
    (tmp_path / "etc").mkdir()
    link = tmp_path / "etc" / "link.json"
    link.symlink_to(key_file)
    return link


def test_revoke_through_a_link_changes_the_file_it_names_and_keeps_the_link(
    key_file: Path, linked_key_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    kept = _add(key_file, capsys, TENANT_A).strip()
    gone = _add(linked_key_file, capsys, TENANT_B).strip()
    gone_id = KEY_SHAPE.match(gone)[1]  # type: ignore[index]
    assert main(["keys", "revoke", gone_id, "--file", str(linked_key_file)]) == 0
    assert linked_key_file.is_symlink()
    assert linked_key_file.readlink() == key_file
    # The file a server reads no longer holds the revoked key.
    ids = [r["id"] for r in json.loads(key_file.read_text())["keys"]]
    assert ids == [KEY_SHAPE.match(kept)[1]]  # type: ignore[index]
    # The temporary file sat beside the file, not the link.
    assert sorted(p.name for p in key_file.parent.iterdir()) == ["etc", "keys.json"]
    assert [p.name for p in linked_key_file.parent.iterdir()] == ["link.json"]


def test_a_link_to_a_missing_file_creates_the_file_it_names(
    key_file: Path, linked_key_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _add(linked_key_file, capsys, TENANT_A)
    assert linked_key_file.is_symlink()
    assert len(json.loads(key_file.read_text())["keys"]) == 1


def test_a_change_through_a_link_waits_for_the_lock_of_the_file_it_names(
    key_file: Path, linked_key_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One lock guards the file whatever path names it: else `keys add` through the link
    and through the file at once could lose a key."""
    _add(key_file, capsys, TENANT_A)
    with key_file.open("rb") as lock:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
        adding = threading.Thread(
            target=add_key, args=(linked_key_file, [TenantId(uuid.UUID(TENANT_B))], Role.READ)
        )
        adding.start()
        adding.join(timeout=0.5)
        assert adding.is_alive(), "the change through the link did not wait for the lock"
        fcntl.flock(lock.fileno(), fcntl.LOCK_UN)
    adding.join(timeout=10)
    assert not adding.is_alive()
    assert len(json.loads(key_file.read_text())["keys"]) == 2


# The lock: the key file itself, whoever may change it ------------------------------------


def _ids(key_file: Path) -> list[str]:
    return [record["id"] for record in json.loads(key_file.read_text())["keys"]]


def _record(key_id: str) -> KeyRecord:
    return KeyRecord(
        id=key_id,
        role=Role.READ,
        tenants=(uuid.UUID(TENANT_A),),
        created=datetime.now(UTC).replace(microsecond=0),
        sha256="0" * 64,
    )


def test_a_change_that_waited_for_a_file_replaced_meanwhile_locks_the_new_one(
    key_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The lock of a file another change replaced guards nothing: a change that waited for
    it and went on would read the new file beside a third change holding the new file's
    lock, and one of the two would lose the other's key."""
    kept = KEY_SHAPE.match(_add(key_file, capsys, TENANT_A).strip())[1]  # type: ignore[index]
    with key_file.open("rb") as first:
        fcntl.flock(first.fileno(), fcntl.LOCK_EX)
        waiting = threading.Thread(
            target=add_key, args=(key_file, [TenantId(uuid.UUID(TENANT_B))], Role.READ)
        )
        waiting.start()
        waiting.join(timeout=0.5)
        assert waiting.is_alive(), "the change did not wait for the lock"
        content = read_key_file(key_file)
        _write(key_file, content, key_file)  # another change, holding the lock, replaced it
        with key_file.open("rb") as third:
            fcntl.flock(third.fileno(), fcntl.LOCK_EX)
            fcntl.flock(first.fileno(), fcntl.LOCK_UN)
            waiting.join(timeout=0.5)
            assert waiting.is_alive(), "the change went on under the lock of a replaced file"
            added = content.model_copy(update={"keys": (*content.keys, _record("0" * 12))})
            _write(key_file, added, key_file)
            fcntl.flock(third.fileno(), fcntl.LOCK_UN)
    waiting.join(timeout=10)
    assert not waiting.is_alive()
    ids = _ids(key_file)
    assert ids[:2] == [kept, "0" * 12]
    assert len(ids) == 3


def test_a_change_finding_the_missing_file_made_meanwhile_adds_to_it(
    key_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two `keys add` to a file that does not exist yet: the one that finds it made by the
    other when it writes adds its key to the other's rather than replace them."""
    mkstemp = tempfile.mkstemp
    made: list[bool] = []

    def racing_mkstemp(*args: Any, **kwargs: Any) -> tuple[int, str]:
        if not made:  # another change makes the file just now
            made.append(True)
            write_key_file(key_file, KeyFileContent(keys=(_record("0" * 12),)))
        return mkstemp(*args, **kwargs)

    monkeypatch.setattr(tempfile, "mkstemp", racing_mkstemp)
    issued = add_key(key_file, [TenantId(uuid.UUID(TENANT_B))], Role.WRITE)
    assert _ids(key_file) == ["0" * 12, issued.record.id]
    assert [p.name for p in key_file.parent.iterdir()] == ["keys.json"]
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600


def test_a_key_file_that_is_not_a_regular_file_is_refused_without_waiting(
    key_file: Path,
) -> None:
    """A FIFO at the key file's path (root opening it to read would wait for a writer)."""
    os.mkfifo(key_file)
    with pytest.raises(InvalidInputError) as refused:
        without_waiting_on(
            key_file, lambda: add_key(key_file, [TenantId(uuid.UUID(TENANT_A))], Role.READ)
        )
    assert str(refused.value) == f"{key_file} is not an API key file: not a regular file"


@pytest.mark.parametrize("change", ["list", "add"])
def test_a_fifo_at_the_key_file_s_path_is_never_opened(key_file: Path, change: str) -> None:
    """A peer waiting at the FIFO's other end (a reader for `add`, which would open it to
    read and write; a writer for `list`, which would open it to read) is not woken:
    the path is looked at before anything opens it."""
    os.mkfifo(key_file)
    peer_mode = os.O_RDONLY if change == "add" else os.O_WRONLY
    opened = threading.Event()

    def peer() -> None:
        os.close(os.open(key_file, peer_mode))  # blocks until someone opens the other end
        opened.set()

    waiting = threading.Thread(target=peer, daemon=True)
    waiting.start()
    time.sleep(0.05)

    def changed() -> object:
        if change == "add":
            return add_key(key_file, [TenantId(uuid.UUID(TENANT_A))], Role.READ)
        return read_key_file(key_file)

    with pytest.raises(InvalidInputError, match="not a regular file"):
        changed()
    woken = opened.wait(0.3)
    # Release the peer whatever happened: open the other end without blocking.
    release = os.O_WRONLY if peer_mode == os.O_RDONLY else os.O_RDONLY
    with contextlib.suppress(OSError):
        os.close(os.open(key_file, release | os.O_NONBLOCK))
    waiting.join(5)
    assert not woken


@pytest.mark.parametrize("through_link", [False, True], ids=["the path", "a link to it"])
def test_list_refuses_a_key_file_that_is_not_a_regular_file_without_waiting(
    key_file: Path,
    linked_key_file: Path,
    capsys: pytest.CaptureFixture[str],
    through_link: bool,
) -> None:
    os.mkfifo(key_file)
    path = linked_key_file if through_link else key_file
    assert without_waiting_on(key_file, lambda: main(["keys", "list", "--file", str(path)])) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert f"error: {path} is not an API key file: not a regular file" in captured.err


@pytest.mark.parametrize("action", ["list", "add"])
def test_a_folder_at_the_key_file_s_path_is_refused_as_not_a_regular_file(
    key_file: Path, capsys: pytest.CaptureFixture[str], action: str
) -> None:
    """As a FIFO is, in the same words, whether listed or changed."""
    key_file.mkdir()
    args = [] if action == "list" else ["--tenant", TENANT_A, "--role", "read"]
    assert main(["keys", action, "--file", str(key_file), *args]) == 1
    assert capsys.readouterr().err.splitlines() == [
        f"error: {key_file} is not an API key file: not a regular file"
    ]


def test_a_server_refuses_a_key_file_that_is_not_a_regular_file_at_start(key_file: Path) -> None:
    os.mkfifo(key_file)
    with pytest.raises(InvalidInputError, match="is not an API key file: not a regular file"):
        without_waiting_on(key_file, lambda: ApiKeyVerifier(key_file))


def test_a_running_server_refuses_every_key_when_a_fifo_replaces_the_key_file(
    key_file: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """It reads the file again when its `stat` changes, in a request: that read must not
    wait for a writer."""
    issued = add_key(key_file, [TenantId(uuid.UUID(TENANT_A))], Role.READ)
    verifier = ApiKeyVerifier(key_file)
    assert asyncio.run(verifier.verify(issued.key)).role is Role.READ
    fifo = key_file.with_name("fifo")
    os.mkfifo(fifo)
    os.replace(fifo, key_file)
    with pytest.raises(CredentialsRefusedError, match=f"no key with id {issued.record.id}"):
        without_waiting_on(key_file, lambda: asyncio.run(verifier.verify(issued.key)))
    assert "is not an API key file: not a regular file" in caplog.text


# Waiting for the lock: said once, bounded, nothing changed when given up ------------------


@contextlib.contextmanager
def _lock_held(key_file: Path) -> Iterator[Callable[[], None]]:
    """The key file's lock held through a descriptor of this process opened for reading
    only (as a reader of the file may hold it; `flock` belongs to the open file, so it
    holds this process's changes off too); what lets it go, which the block's end does."""
    descriptor = os.open(key_file, os.O_RDONLY)
    fcntl.flock(descriptor, fcntl.LOCK_EX)
    try:
        yield lambda: fcntl.flock(descriptor, fcntl.LOCK_UN)
    finally:
        os.close(descriptor)


@contextlib.contextmanager
def _lock_held_by_another_process(key_file: Path) -> Iterator[Callable[[], None]]:
    """The key file's lock held by a child process that opened it for reading only; what
    lets it go (the child ends), which the block's end does."""
    code = (
        "import fcntl, sys\n"
        "file = open(sys.argv[1], 'rb')\n"
        "fcntl.flock(file, fcntl.LOCK_EX)\n"
        "print('held', flush=True)\n"
        "sys.stdin.read()\n"  # until the test closes it
    )
    holder = subprocess.Popen(
        [sys.executable, "-c", code, str(key_file)],
        env=child_environment(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdin is not None
    assert holder.stdout is not None
    try:
        assert holder.stdout.readline() == "held\n"
        yield holder.stdin.close
    finally:
        holder.stdin.close()
        holder.wait(timeout=10)


def _waiting_line(key_file: Path, bound: str) -> str:
    return f"waiting for the lock of {key_file}, which another process holds ({bound})"


@pytest.mark.parametrize("said_to", ["on_wait", "the log"])
def test_a_change_waits_for_a_lock_held_elsewhere_says_so_once_and_gives_up(
    key_file: Path,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
    said_to: str,
) -> None:
    """Polled, not waited on without limit: after `timeout`, `KeyFileBusyError` (an
    `OSError`), the file as it was and no other file left."""
    _add(key_file, capsys, TENANT_A)
    before = key_file.read_bytes()
    said: list[str] = []
    on_wait = said.append if said_to == "on_wait" else None
    caplog.set_level(logging.INFO, logger="redstring.api")
    with _lock_held(key_file) as release:
        started = time.monotonic()
        with pytest.raises(KeyFileBusyError) as gave_up:
            ended_within(
                5,
                lambda: add_key(
                    key_file,
                    [TenantId(uuid.UUID(TENANT_B))],
                    Role.READ,
                    timeout=0.3,
                    on_wait=on_wait,
                ),
                release,
            )
        waited = time.monotonic() - started
    assert 0.3 <= waited < 2
    assert isinstance(gave_up.value, OSError)
    assert str(gave_up.value) == (
        f"gave up after 0.3 s waiting for the lock of {key_file}, which another process "
        "holds: nothing changed"
    )
    logged = [r.getMessage() for r in caplog.records if r.name == "redstring.api"]
    assert (said if said_to == "on_wait" else logged) == [_waiting_line(key_file, "up to 0.3 s")]
    assert key_file.read_bytes() == before
    assert [p.name for p in key_file.parent.iterdir()] == ["keys.json"]


def test_a_change_goes_on_once_the_lock_is_let_go(
    key_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _add(key_file, capsys, TENANT_A)
    waiting = threading.Event()
    said: list[str] = []

    def on_wait(line: str) -> None:
        said.append(line)
        waiting.set()

    with _lock_held(key_file) as release:
        adding = threading.Thread(
            target=add_key,
            args=(key_file, [TenantId(uuid.UUID(TENANT_B))], Role.READ),
            kwargs={"timeout": 30, "on_wait": on_wait},
        )
        adding.start()
        assert waiting.wait(timeout=5)
        time.sleep(0.3)  # a few tries of the lock
        assert adding.is_alive()
        release()
        adding.join(timeout=2)  # a try every 0.25 s at most
        assert not adding.is_alive()
    assert said == [_waiting_line(key_file, "up to 30 s")]
    assert len(_ids(key_file)) == 2


def test_a_change_finding_the_lock_free_says_nothing(
    key_file: Path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="redstring.api")
    _add(key_file, capsys, TENANT_A)
    said: list[str] = []
    add_key(key_file, [TenantId(uuid.UUID(TENANT_B))], Role.READ, timeout=0, on_wait=said.append)
    assert said == []
    assert caplog.records == []


@pytest.mark.parametrize("timeout", [-1.0, math.nan])
def test_a_timeout_that_is_not_a_number_of_seconds_is_refused_before_anything(
    key_file: Path, timeout: float
) -> None:
    with pytest.raises(InvalidInputError, match="a lock timeout is a number of seconds from 0 up"):
        add_key(key_file, [TenantId(uuid.UUID(TENANT_A))], Role.READ, timeout=timeout)
    assert not key_file.exists()


@pytest.mark.parametrize("action", ["add", "revoke"])
def test_keys_says_it_waits_for_a_lock_another_process_holds_and_gives_up_after_wait(
    key_file: Path, capsys: pytest.CaptureFixture[str], action: str
) -> None:
    """On stderr, at once and once; then exit 1 with the file unchanged and no key on
    stdout."""
    key_id = KEY_SHAPE.match(_add(key_file, capsys, TENANT_A).strip())[1]  # type: ignore[index]
    before = key_file.read_bytes()
    args = (
        ["add", "--tenant", TENANT_B, "--role", "read"] if action == "add" else ["revoke", key_id]
    )
    with _lock_held_by_another_process(key_file) as release:
        command = ["keys", *args, "--file", str(key_file), "--wait", "0.2"]
        status = ended_within(5, lambda: main(command), release)
    assert status == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.splitlines() == [
        _waiting_line(key_file, "up to 0.2 s"),
        f"error: gave up after 0.2 s waiting for the lock of {key_file}, which another "
        "process holds: nothing changed (--wait SECONDS waits longer)",
    ]
    assert key_file.read_bytes() == before


def test_write_key_file_takes_the_lock_of_add_and_revoke(
    key_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Else a `write_key_file` beside a `keys add` could drop the key just added."""
    _add(key_file, capsys, TENANT_A)
    before = key_file.read_bytes()
    said: list[str] = []
    with _lock_held(key_file) as release, pytest.raises(KeyFileBusyError):
        ended_within(
            5,
            lambda: write_key_file(key_file, KeyFileContent(), timeout=0.2, on_wait=said.append),
            release,
        )
    assert said == [_waiting_line(key_file, "up to 0.2 s")]
    assert key_file.read_bytes() == before
    write_key_file(key_file, KeyFileContent())  # the lock let go
    assert _ids(key_file) == []


def test_write_key_file_replaces_a_file_that_is_not_a_key_file(key_file: Path) -> None:
    """It writes the whole file: what was there is not read, so need not parse."""
    key_file.write_text("not json")
    write_key_file(key_file, KeyFileContent(keys=(_record("0" * 12),)))
    assert _ids(key_file) == ["0" * 12]


# File systems whose locks differ: NFS ------------------------------------------------------


def _access_of(descriptor: int) -> int:
    return fcntl.fcntl(descriptor, fcntl.F_GETFL) & os.O_ACCMODE


@pytest.fixture
def nfs_flock(monkeypatch: pytest.MonkeyPatch) -> None:
    """`fcntl.flock` as on NFS, where it is a record lock: an exclusive lock of a descriptor
    open for reading only is refused (`EBADF`)."""
    flock = fcntl.flock

    def nfs(descriptor: int, operation: int) -> None:
        if operation & fcntl.LOCK_EX and _access_of(descriptor) == os.O_RDONLY:
            raise OSError(errno.EBADF, os.strerror(errno.EBADF))
        flock(descriptor, operation)

    monkeypatch.setattr(fcntl, "flock", nfs)


@pytest.mark.usefixtures("nfs_flock")
def test_on_nfs_a_user_who_may_write_the_key_file_changes_it(
    key_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The lock's descriptor is open for reading and writing where the user may write the
    file; `keys add` failed with `Bad file descriptor`."""
    key_id = KEY_SHAPE.match(_add(key_file, capsys, TENANT_A).strip())[1]  # type: ignore[index]
    _add(key_file, capsys, TENANT_B)  # the file exists: this change locks it
    assert main(["keys", "revoke", key_id, "--file", str(key_file)]) == 0
    assert len(_ids(key_file)) == 1


@pytest.mark.parametrize("code", [errno.EBADF, errno.ENOLCK])
@pytest.mark.parametrize("writable", [True, False], ids=["writable", "read-only"])
def test_a_lock_the_file_system_refuses_is_named_as_its_cause(
    key_file: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    code: int,
    writable: bool,
) -> None:
    """`EBADF` (NFS refusing a descriptor open for reading only) and `ENOLCK` (no lock
    manager) say the key file needs a file system whose locks work; exit 1, nothing
    changed."""
    _add(key_file, capsys, TENANT_A)
    before = key_file.read_bytes()

    def refused(descriptor: int, operation: int) -> None:
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(fcntl, "flock", refused)
    if not writable:  # as a user who may read the file and not write it
        os_open = os.open

        def read_only(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
            if Path(path) == key_file and flags & os.O_ACCMODE != os.O_RDONLY:
                raise PermissionError(errno.EACCES, os.strerror(errno.EACCES))
            return os_open(path, flags, *args, **kwargs)

        monkeypatch.setattr(os, "open", read_only)
    args = ["keys", "add", "--file", str(key_file), "--tenant", TENANT_B, "--role", "read"]
    assert main(args) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    cause = (
        "" if writable else " (NFS locks only a file opened for writing, which this user may not)"
    )
    assert captured.err.splitlines() == [
        f"error: cannot lock {key_file}: {os.strerror(code)}; the key file needs a local "
        f"file system, or one whose locks work{cause}"
    ]
    assert key_file.read_bytes() == before
    assert [p.name for p in key_file.parent.iterdir()] == ["keys.json"]


# The key file's owner (not root), its group, and a member of the group (not its owner).
OWNER, GROUP, MEMBER = 65534, 48150, 48151


@pytest.fixture
def group_key_file() -> Iterator[Path]:
    """`keys.json` holding one key added by root, `0660` and owned by `OWNER:GROUP`, in a
    folder of theirs (`0770`) that other users can reach (pytest's folders are root's
    alone)."""
    if os.geteuid() != 0:
        pytest.skip("giving a file to another owner, and acting as another user, need root")
    folder = Path(tempfile.mkdtemp(prefix="redstring-keys-"))
    try:
        if any(not p.stat().st_mode & stat.S_IXOTH for p in folder.parents):
            pytest.skip(f"other users cannot reach {folder}")
        os.chown(folder, OWNER, GROUP)
        folder.chmod(0o770)
        key_file = folder / "keys.json"
        add_key(key_file, [TenantId(uuid.UUID(TENANT_A))], Role.READ)
        os.chown(key_file, OWNER, GROUP)
        key_file.chmod(0o660)
        yield key_file
    finally:
        shutil.rmtree(folder)


def _pairs(argv: list[str]) -> Iterator[tuple[str | None, str]]:
    """Each word of `argv` with the word before it (None for the first)."""
    return zip([None, *argv], argv, strict=False)


def _as_member(run: Callable[[], str]) -> tuple[int, str]:
    """`run` in a child process (forked, so it needs no file under root's home) as `MEMBER`,
    whose groups are its own and `GROUP`: its exit status, and what it returned or
    raised."""
    reader, writer = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - the child process
        status, said = 1, "nothing said"
        try:
            signal.alarm(60)  # a child waiting for ever is killed
            os.close(reader)
            os.setgroups([GROUP])
            os.setgid(MEMBER)
            os.setuid(MEMBER)
            said, status = run(), 0
        except BaseException as exc:
            said = repr(exc)
        finally:
            os.write(writer, said.encode())
            os._exit(status)
    os.close(writer)
    with os.fdopen(reader, "rb") as pipe:
        said = pipe.read().decode()
    _, status = os.waitpid(child, 0)
    return os.waitstatus_to_exitcode(status), said


def _command_as_member(argv: list[str]) -> tuple[int, str]:
    """`redstring ARGV` run as `MEMBER` (`_as_member`): its exit status and its stderr.

    The same command is first run as root with a folder for its `--file` (an error the
    command reports as it reports the member's), so that whatever the command imports on
    its way to an `error:` line is imported before the fork: the member may not read the
    venv (a checkout in a folder only root may enter, as `mktemp -d` makes)."""
    with tempfile.TemporaryDirectory() as folder, contextlib.redirect_stderr(io.StringIO()):
        main([folder if previous == "--file" else word for previous, word in _pairs(argv)])

    def run() -> str:
        said = io.StringIO()
        with contextlib.redirect_stderr(said):
            status = main(argv)
        return json.dumps({"status": status, "err": said.getvalue()})

    exit_status, said = _as_member(run)
    assert exit_status == 0, said
    ran = json.loads(said)
    return ran["status"], ran["err"]


@pytest.mark.parametrize(
    "args",
    [["list"], ["add", "--tenant", TENANT_B, "--role", "read"], ["revoke", "0" * 12]],
    ids=["list", "add", "revoke"],
)
def test_a_key_file_the_user_may_not_read_exits_1_naming_it(
    group_key_file: Path, args: list[str]
) -> None:
    """`0600`, its owner's alone: a member of its group may not read it. The file is at
    fault for this user, not the command line, so 1 (2 says the command was misused)."""
    group_key_file.chmod(0o600)
    before = group_key_file.read_bytes()
    [action, *rest] = args

    status, err = _command_as_member(["keys", action, "--file", str(group_key_file), *rest])

    assert status == 1
    assert err.splitlines() == [
        f"error: cannot read the API key file {group_key_file}: Permission denied"
    ]
    assert group_key_file.read_bytes() == before


def test_root_changes_a_key_file_of_another_owner_without_a_file_of_its_own(
    group_key_file: Path,
) -> None:
    """Root's change (`keys add` as root is the usual first one) leaves no lock file whose
    owner or mode would shut the file's group out; the file keeps its owner, group and
    mode."""
    add_key(group_key_file, [TenantId(uuid.UUID(TENANT_B))], Role.READ)
    assert [p.name for p in group_key_file.parent.iterdir()] == ["keys.json"]
    after = group_key_file.stat()
    assert (after.st_uid, after.st_gid, stat.S_IMODE(after.st_mode)) == (OWNER, GROUP, 0o660)
    assert len(_ids(group_key_file)) == 2


def test_a_member_of_the_key_file_s_group_changes_it_after_root(group_key_file: Path) -> None:
    """The file's group may write it (`0660`) and its folder: a member who is not its
    owner takes the lock after root's change and adds a key. It keeps the group and the
    mode, not the owner, and warns of it as ever."""
    root_key = _ids(group_key_file)

    def add() -> str:
        warned: list[str] = []
        handler = logging.Handler(logging.WARNING)
        handler.emit = lambda record: warned.append(record.getMessage())  # type: ignore[method-assign]
        logging.getLogger("redstring.api").addHandler(handler)
        issued = add_key(group_key_file, [TenantId(uuid.UUID(TENANT_B))], Role.READ)
        return json.dumps({"id": issued.record.id, "warned": warned})

    status, said = _as_member(add)
    assert status == 0, said
    added = json.loads(said)
    assert _ids(group_key_file) == [*root_key, added["id"]]
    after = group_key_file.stat()
    assert (after.st_uid, after.st_gid, stat.S_IMODE(after.st_mode)) == (MEMBER, GROUP, 0o660)
    assert added["warned"] == [
        _owner_warning(group_key_file, _name_owner((OWNER, GROUP)), _name_owner((MEMBER, GROUP)))
    ]
    assert [p.name for p in group_key_file.parent.iterdir()] == ["keys.json"]


@pytest.mark.parametrize(
    ("mode", "access"),
    [(0o660, os.O_RDWR), (0o640, os.O_RDONLY)],
    ids=["the group may write it", "the group may only read it"],
)
def test_a_member_who_may_replace_the_key_file_locks_it_as_its_mode_lets_them(
    group_key_file: Path, mode: int, access: int
) -> None:
    """Opened for writing where the group may write the file (NFS needs it), for reading
    only where it may only read it: the member replaces it through the folder (`0770`)
    all the same, so requiring write access for the lock would shut them out."""
    group_key_file.chmod(mode)
    root_key = _ids(group_key_file)

    def add() -> str:
        accesses: list[int] = []
        flock = fcntl.flock

        def recorded(descriptor: int, operation: int) -> None:
            accesses.append(_access_of(descriptor))
            flock(descriptor, operation)

        fcntl.flock = recorded  # in the child process alone
        issued = add_key(group_key_file, [TenantId(uuid.UUID(TENANT_B))], Role.READ)
        return json.dumps({"id": issued.record.id, "accesses": accesses})

    status, said = _as_member(add)
    assert status == 0, said
    added = json.loads(said)
    assert added["accesses"] == [access]
    assert _ids(group_key_file) == [*root_key, added["id"]]
    assert stat.S_IMODE(group_key_file.stat().st_mode) == mode


# The mode, owner and group of a key file a command replaces -------------------------------


def test_add_and_revoke_keep_the_mode_of_the_file_they_replace(
    key_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A group-readable file (a server running as another user of the group) stays so."""
    gone = _add(key_file, capsys, TENANT_A).strip()
    key_file.chmod(0o640)
    _add(key_file, capsys, TENANT_B)
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o640
    assert main(["keys", "revoke", KEY_SHAPE.match(gone)[1], "--file", str(key_file)]) == 0  # type: ignore[index]
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o640


async def test_a_server_still_warns_of_a_key_file_others_can_read_after_add(
    key_file: Path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    _add(key_file, capsys, TENANT_A)
    os.chmod(key_file, 0o644)
    caplog.set_level(logging.WARNING, logger="redstring.api")
    verifier = ApiKeyVerifier(key_file)
    added = _add(key_file, capsys, TENANT_B).strip()
    assert (await verifier.verify(added)).role is Role.READ  # the file read again
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warnings == [f"the API key file {key_file} is open to every user; chmod o-rw it"] * 2


def _signature(mode: int, owner: int, group: int) -> FileSignature:
    return FileSignature(
        inode=1,
        device=1,
        size=1,
        mtime_ns=1,
        ctime_ns=1,
        mode=0o100000 | mode,
        owner=owner,
        group=group,
    )


# The server's user and group, another user, a group it is not in.
ME, MINE, SOMEONE, THEIRS = 1000, 1000, 1001, 1001


@pytest.mark.parametrize(
    ("mode", "owner", "group", "warned"),
    [
        (0o600, ME, THEIRS, None),
        (0o400, SOMEONE, MINE, None),
        # A server reading through the file's group needs its read, not its owner.
        (0o640, SOMEONE, MINE, None),
        (0o640, ME, THEIRS, "readable by its group, which this server, its owner, does not need"),
        (0o660, SOMEONE, MINE, "writable by its group"),
        (0o644, SOMEONE, MINE, "open to every user"),
        (0o602, ME, THEIRS, "open to every user"),
        # Neither its owner nor in its group, the server reads it as every user does:
        # `chmod o-rw` alone would lock it out.
        (0o644, SOMEONE, THEIRS, "open to every user, which is how this server reads it"),
        (0o601, ME, THEIRS, None),  # execution alone reads nothing
    ],
)
def test_a_key_file_s_mode_is_warned_about_for_what_it_lets_others_do(
    mode: int, owner: int, group: int, warned: str | None
) -> None:
    exposure = _exposure(_signature(mode, owner, group), ME, frozenset({MINE}))
    assert (exposure if exposure is None else exposure.split(";")[0].split(":")[0]) == warned


def test_a_server_not_given_the_key_file_is_told_to_take_it_before_closing_it() -> None:
    exposure = _exposure(_signature(0o644, SOMEONE, THEIRS), ME, frozenset({MINE}))
    assert exposure is not None
    assert exposure.endswith("(chown or chgrp), then chmod o-rw it")
    # Root reads whatever the mode.
    assert _exposure(_signature(0o644, SOMEONE, THEIRS), 0, frozenset({0})) == (
        "open to every user; chmod o-rw it"
    )


@pytest.fixture
def daemon_ids() -> tuple[int, int]:
    """The uid and gid of `daemon`, for tests that give the key file to another owner (as
    root only: that is what CI runs as)."""
    if os.geteuid() != 0:
        pytest.skip("giving a file to another owner needs root")
    try:
        return pwd.getpwnam("daemon").pw_uid, grp.getgrnam("daemon").gr_gid
    except KeyError:
        pytest.skip("no user and group daemon here")


@pytest.mark.parametrize("owner", ["root", "daemon"])
def test_add_and_revoke_keep_the_owner_and_group_of_the_file(
    key_file: Path, capsys: pytest.CaptureFixture[str], daemon_ids: tuple[int, int], owner: str
) -> None:
    """`0640 root:daemon` (a server running in group daemon) stays so, and so does a file
    owned by daemon, where the process may give them back (root)."""
    uid, gid = (0 if owner == "root" else daemon_ids[0]), daemon_ids[1]
    gone = _add(key_file, capsys, TENANT_A).strip()
    os.chown(key_file, uid, gid)
    key_file.chmod(0o640)
    _add(key_file, capsys, TENANT_B)
    after_add = key_file.stat()
    assert (after_add.st_uid, after_add.st_gid, stat.S_IMODE(after_add.st_mode)) == (
        uid,
        gid,
        0o640,
    )
    assert main(["keys", "revoke", KEY_SHAPE.match(gone)[1], "--file", str(key_file)]) == 0  # type: ignore[index]
    after_revoke = key_file.stat()
    assert (after_revoke.st_uid, after_revoke.st_gid) == (uid, gid)
    assert "warning" not in capsys.readouterr().err


@pytest.mark.parametrize(
    ("may_set_group", "expected"),
    [(True, ("daemon", 0o640)), (False, ("root", 0o600))],
    ids=["the group kept", "neither kept"],
)
def test_an_owner_the_process_may_not_give_back_is_warned_about(
    key_file: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    daemon_ids: tuple[int, int],
    may_set_group: bool,
    expected: tuple[str, int],
) -> None:
    """As a user who may replace the file but not chown it to its owner: the group is kept
    when the user is in it, else the group's permissions are dropped (they would go to the
    user's own group), and the command says so on stderr."""
    _add(key_file, capsys, TENANT_A)
    os.chown(key_file, *daemon_ids)
    key_file.chmod(0o640)
    fchown = os.fchown

    def unprivileged_fchown(fd: int, uid: int, gid: int) -> None:
        if uid != -1 or not may_set_group:
            raise PermissionError(1, "Operation not permitted")
        fchown(fd, uid, gid)

    monkeypatch.setattr(os, "fchown", unprivileged_fchown)
    args = ["keys", "add", "--file", str(key_file), "--tenant", TENANT_B, "--role", "read"]
    assert main(args) == 0
    captured = capsys.readouterr()
    assert KEY_SHAPE.match(captured.out.strip())
    group, mode = expected
    after = key_file.stat()
    assert (after.st_uid, after.st_gid) == (0, grp.getgrnam(group).gr_gid)
    assert stat.S_IMODE(after.st_mode) == mode
    assert (
        f"warning: {key_file} was owned by daemon:daemon and is now owned by root:{group}"
        in captured.err
    )
    assert len(json.loads(key_file.read_text())["keys"]) == 2


def _refused_fchown(fd: int, uid: int, gid: int) -> None:
    raise PermissionError(1, "Operation not permitted")


def _owner_warning(path: Path, before: str, after: str) -> str:
    return (
        f"{path} was owned by {before} and is now owned by {after}, which this user may not "
        "change back: a server running as the old owner or group may no longer read it; chown it"
    )


@pytest.mark.parametrize("change", ["add", "revoke"])
def test_add_key_and_revoke_key_log_an_owner_they_could_not_keep(
    key_file: Path,
    linked_key_file: Path,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
    daemon_ids: tuple[int, int],
    change: str,
) -> None:
    """The library's calls warn as `keys` does (a WARNING of `redstring.api`), naming the
    file as the caller did (here a link); nothing while the owner is kept."""
    ids = [KEY_SHAPE.match(_add(key_file, capsys, TENANT_A).strip())[1] for _ in "ab"]  # type: ignore[index]
    os.chown(key_file, *daemon_ids)
    caplog.set_level(logging.WARNING, logger="redstring.api")

    def run() -> None:
        if change == "add":
            add_key(linked_key_file, [TenantId(uuid.UUID(TENANT_B))], Role.READ)
        else:
            revoke_key(linked_key_file, ids.pop())

    run()
    assert caplog.records == []  # root gave it back
    monkeypatch.setattr(os, "fchown", _refused_fchown)
    run()
    [record] = caplog.records
    assert (record.name, record.levelno) == ("redstring.api", logging.WARNING)
    assert record.getMessage() == _owner_warning(linked_key_file, "daemon:daemon", "root:root")
    assert (key_file.stat().st_uid, key_file.stat().st_gid) == (0, 0)


def test_keys_says_the_owner_it_could_not_keep_once_after_its_own_line(
    key_file: Path, capsys: pytest.CaptureFixture[str], daemon_ids: tuple[int, int]
) -> None:
    """In a process of its own, whose logging nothing configured: the warning is the
    command's line, after what it did, and not Python's last-resort line besides."""
    gone = KEY_SHAPE.match(_add(key_file, capsys, TENANT_A).strip())[1]  # type: ignore[index]
    code = (
        "import os, sys\n"
        "from redstring.api.cli import main\n"
        "def refused(fd, uid, gid): raise PermissionError(1, 'Operation not permitted')\n"
        "os.fchown = refused\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    warning = "warning: " + _owner_warning(key_file, "daemon:daemon", "root:root")
    for args, said in [
        (["add", "--tenant", TENANT_B, "--role", "read"], " added to "),
        (["revoke", gone], f"key {gone} revoked: "),
    ]:
        os.chown(key_file, *daemon_ids)
        done = subprocess.run(
            [sys.executable, "-c", code, "keys", *args, "--file", str(key_file)],
            env=child_environment(),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        first, second = done.stderr.splitlines()
        assert said in first
        assert second == warning


# Durability: a change survives a crash once the command is done ---------------------------


def test_the_new_file_is_synced_before_the_replace_and_its_folder_after(
    key_file: Path,
    linked_key_file: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Else a crash could leave the old file (and a revoked key) or an empty one. Through a
    link, the folder synced is the real file's."""
    _add(key_file, capsys, TENANT_A)
    events: list[tuple[str, ...]] = []
    fsync, replace = os.fsync, os.replace

    def recording_fsync(fd: int) -> None:
        status = os.fstat(fd)
        kind = "folder" if stat.S_ISDIR(status.st_mode) else "file"
        events.append(("fsync", kind, str(status.st_ino)))
        fsync(fd)

    def recording_replace(source: str, target: str) -> None:
        events.append(("replace", str(target)))
        replace(source, target)

    monkeypatch.setattr(os, "fsync", recording_fsync)
    monkeypatch.setattr(os, "replace", recording_replace)
    _add(linked_key_file, capsys, TENANT_B)
    assert events == [
        ("fsync", "file", str(key_file.stat().st_ino)),
        ("replace", str(key_file.resolve())),
        ("fsync", "folder", str(key_file.parent.stat().st_ino)),
    ]
