"""Read-your-writes across API replicas: the bookmark a mutation answers with, sent back.

A request whose operation wrote answers with a bookmark, an opaque token
naming the store state its writes left, in the `Redstring-Bookmark` response
header and in `extensions.bookmark` of its body. A request that sends a
bookmark back in the `Redstring-Bookmark` request header reads at least
that state, whichever replica of the API serves it and whichever member of a
Neo4j cluster answers its reads. Within one replica this order holds without
a bookmark. A header that is not a bookmark this deployment made is refused
(400, `BAD_REQUEST`) before any store sees it.

The token is sealed (`BookmarkSeal`): the store's positions (Neo4j bookmarks) as
a JSON list, encrypted and authenticated with AES-SIV (RFC 5297, `cryptography`'s
`AESSIV`, a key of 512 bits derived from one secret by HKDF-SHA256), behind a version
prefix and base64url-encoded without padding. AES-SIV is deterministic (the same
positions make the same token, so the header and the body of one response agree)
and releases nothing of a token that does not authenticate, so a caller can neither
forge a position (a Neo4j bookmark naming a transaction that never comes makes a read
wait for it) nor read one (a position names the database and how many transactions it
has committed, every tenant's).

The secret is `REDSTRING_BOOKMARK_SECRET`, the same on every replica; without
it, `serve` makes one when it starts, shared by its workers (`WORKERS_KEY`),
so a bookmark from another replica, or from before a restart, is refused with
a message that names the setting.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import secrets
from collections.abc import Sequence

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESSIV
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from redstring.api.errors import ErrorCode, RequestRefusedError

HEADER = "Redstring-Bookmark"
SECRET_SETTING = "REDSTRING_BOOKMARK_SECRET"
# The key `serve` makes for its workers when no secret is set, hex in the environment
# they inherit; not a setting (no `REDSTRING_` prefix), never logged.
WORKERS_KEY = "_REDSTRING_WORKERS_BOOKMARK_KEY"
MIN_SECRET_CHARS = 32

_PREFIX = "rb2."
_OLD_PREFIXES = ("rb1.",)  # unsigned tokens of earlier versions
_SIV_BYTES = 16  # AES-SIV's synthetic IV, before the ciphertext
_KEY_BYTES = 64  # AES-SIV with two 256-bit keys
# Bounds that no token redstring makes comes near: a position is some tens of bytes.
MAX_TOKEN_CHARS = 8192
MAX_POSITIONS = 64
MAX_POSITION_CHARS = 512


class BookmarkSeal:
    """Seals positions into tokens and opens tokens it sealed, with keys derived from
    `secret`. `configured` says whether the secret is the deployment's setting (shared
    by replicas, kept across restarts) or made at start, which the refusal of a token
    it did not seal explains."""

    def __init__(self, secret: bytes, *, configured: bool) -> None:
        key = HKDF(
            algorithm=hashes.SHA256(), length=_KEY_BYTES, salt=None, info=b"redstring bookmark"
        ).derive(secret)
        self._siv = AESSIV(key)
        self.configured = configured

    @classmethod
    def generated(cls) -> BookmarkSeal:
        """A seal of a new random key (one process's, until it stops)."""
        return cls(secrets.token_bytes(32), configured=False)

    @classmethod
    def for_server(
        cls, secret: str | None, *, environ: dict[str, str] | None = None
    ) -> BookmarkSeal:
        """The seal of the setting's `secret` when there is one; else of the key `serve`
        handed its workers in `WORKERS_KEY` (`hand_to_workers`); else a new one."""
        if secret is not None:
            return cls(secret.encode("utf-8"), configured=True)
        handed = (os.environ if environ is None else environ).get(WORKERS_KEY)
        if handed:
            return cls(bytes.fromhex(handed), configured=False)
        return cls.generated()

    def encode(self, positions: Sequence[str]) -> str:
        """The token of `positions` (at least one), the same for the same positions."""
        return self._sealed(json.dumps(list(positions), separators=(",", ":")).encode())

    def decode(self, token: str) -> tuple[str, ...]:
        """The positions of a token this seal made; `RequestRefusedError` (400) for any
        other: malformed, of an earlier format, or not signed with this seal's key."""
        if token.startswith(_OLD_PREFIXES):
            raise _refused(
                "it is of an earlier, unsigned format, which this version no longer takes:"
                " send the value a mutation answered with since"
            )
        if len(token) > MAX_TOKEN_CHARS or not token.startswith(_PREFIX):
            raise _malformed()
        body = token[len(_PREFIX) :]
        try:
            raw = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))
        except (binascii.Error, ValueError):
            raise _malformed() from None
        if len(raw) <= _SIV_BYTES:
            raise _malformed()
        try:
            opened = self._siv.decrypt(raw, [_PREFIX.encode()])
        except InvalidTag:
            raise self._not_ours() from None
        try:
            positions = json.loads(opened)
        except ValueError:  # sealed by this key, so never; refused all the same
            raise _malformed() from None
        if (
            not isinstance(positions, list)
            or not 0 < len(positions) <= MAX_POSITIONS
            or not all(isinstance(p, str) and 0 < len(p) <= MAX_POSITION_CHARS for p in positions)
        ):
            raise _malformed()
        return tuple(positions)

    def from_header(self, value: str | None) -> tuple[str, ...]:
        """The positions a request's `Redstring-Bookmark` header asks for (none without
        one)."""
        if value is None:
            return ()
        return self.decode(value.strip())

    def _sealed(self, raw: bytes) -> str:
        """A token of any content `raw`: encrypted and authenticated, the prefix bound in
        as associated data."""
        sealed = self._siv.encrypt(raw, [_PREFIX.encode()])
        return _PREFIX + base64.urlsafe_b64encode(sealed).decode().rstrip("=")

    def _not_ours(self) -> RequestRefusedError:
        if self.configured:
            return _refused(
                f"it is not signed with this deployment's {SECRET_SETTING} (it was changed"
                " since, or the value was altered): send the value a mutation answered with"
            )
        return _refused(
            f"it was not made by this server since it started: without {SECRET_SETTING}"
            " each server signs bookmarks with a key of its own, made at start, so one from"
            f" another replica or from before a restart is refused; set {SECRET_SETTING},"
            " the same on every replica, to keep bookmarks valid across them"
        )


def hand_to_workers(secret: str | None) -> None:
    """Make the key the workers of one `serve` share (`WORKERS_KEY`), unless the
    deployment's `secret` is set: the workers are spawned with this environment."""
    if secret is None:
        os.environ[WORKERS_KEY] = secrets.token_hex(32)


def _malformed() -> RequestRefusedError:
    return _refused("send back the value a mutation answered with")


def _refused(why: str) -> RequestRefusedError:
    return RequestRefusedError(
        400, ErrorCode.BAD_REQUEST, f"The {HEADER} header is not a bookmark: {why}"
    )
