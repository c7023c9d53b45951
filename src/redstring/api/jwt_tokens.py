"""JWT bearer tokens (PyJWT): HS256 with a shared secret, or RS256 with keys from a JWKS.

The algorithm is pinned to the kind of key configured, never read from the
token: a token saying `alg: none`, or HS256 "signed" with the RSA public key,
is refused. Expiry is required and checked, to the second; a token issued (`iat`) or
valid from (`nbf`) up to `CLOCK_SKEW_SECONDS` ahead of this server's clock is taken,
since an issuer's clock may run ahead of it; the issuer and the audience are checked
when set. The caller's tenants are the UUID strings of the claim
`REDSTRING_JWT_TENANTS_CLAIM` and its role the `read` or `write` of
`REDSTRING_JWT_ROLE_CLAIM`; a token whose claims are missing or malformed
proves nothing and is refused like a forged one.

A JWKS file is read at start and again whenever its `stat` changes (a rotated
key works at once, without a restart); a JWKS URL is fetched by PyJWT's
`PyJWKClient`, which caches the key set, in a worker thread (its fetch
blocks), so the event loop never waits on the network.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlsplit

import jwt
from jwt import PyJWK, PyJWKClient, PyJWKClientConnectionError, PyJWKSet, PyJWTError

from redstring.api.authorization import Caller, Role
from redstring.api.credentials import CredentialsRefusedError
from redstring.api.errors import ErrorCode, RequestRefusedError
from redstring.api.protections import is_loopback_name
from redstring.api.retry_after import unavailable_headers
from redstring.api.settings import Settings
from redstring.api.watched_file import WatchedFile, read_regular_file
from redstring.domain.errors import InvalidInputError
from redstring.domain.ids import TenantId, uuid_of_text
from redstring.domain.url_secrets import holds_userinfo, shown_url

logger = logging.getLogger("redstring.api")

HS256, RS256 = "HS256", "RS256"
# RFC 7518, 3.2: an HMAC key at least as long as the hash output.
MIN_SECRET_BYTES = 32
JWKS_FETCH_TIMEOUT = 5.0
JWKS_CACHE_SECONDS = 300.0


class TokenKeys(Protocol):
    """Where the key checking a token's signature comes from, and its one algorithm."""

    algorithm: str

    async def key_for(self, token: str) -> PyJWK | bytes: ...


class SharedSecret:
    """HS256 with `REDSTRING_JWT_SECRET`."""

    algorithm = HS256

    def __init__(self, secret: bytes) -> None:
        self._secret = secret

    async def key_for(self, token: str) -> PyJWK | bytes:
        return self._secret


def _is_rs256(key: PyJWK) -> bool:
    return key.key_type == "RSA" and key.algorithm_name == RS256


def _rs256_keys(key_set: PyJWKSet) -> list[PyJWK]:
    """The keys of `key_set` that can check an RS256 signature."""
    return [key for key in key_set.keys if _is_rs256(key) and key.public_key_use in ("sig", None)]


def _key_id(token: str) -> str | None:
    try:
        kid = jwt.get_unverified_header(token).get("kid")
    except PyJWTError as exc:
        raise CredentialsRefusedError(f"token header unreadable: {exc}") from None
    return kid if isinstance(kid, str) else None


def _read_jwks_file(path: Path) -> dict[str | None, PyJWK]:
    """The RS256 keys of the JWKS file `path` by kid; `InvalidInputError` when it cannot
    be read or holds no usable key."""
    try:
        raw = read_regular_file(path)
    except OSError as exc:
        raise InvalidInputError(f"cannot read the JWKS file {path}: {exc.strerror}") from None
    if raw is None:  # a FIFO, say: refused rather than waited on
        raise InvalidInputError(f"{path} is not a JWKS: not a regular file")
    try:
        key_set = PyJWKSet.from_json(raw.decode("utf-8"))
    except (PyJWTError, ValueError) as exc:
        raise InvalidInputError(f"{path} is not a JWKS: {exc}") from None
    keys = _rs256_keys(key_set)
    if not keys:
        raise InvalidInputError(f"the JWKS file {path} holds no RSA key for RS256")
    if len(keys) > 1 and any(key.key_id is None for key in keys):
        raise InvalidInputError(f"the JWKS file {path} holds several keys: each needs a kid")
    return {key.key_id: key for key in keys}


class JwksFile:
    """RS256 with the keys of a JWKS file, read again whenever its `stat` changes.

    A file that disappears or stops being a usable JWKS refuses every token (and
    is logged at ERROR) until it is fixed: keeping the keys read before would keep
    a key removed from the file working.
    """

    algorithm = RS256

    def __init__(self, path: Path) -> None:
        self._file: WatchedFile[dict[str | None, PyJWK]] = WatchedFile(
            path,
            _read_jwks_file,
            empty={},
            refusal="every token is refused until the JWKS file is fixed",
            on_read=lambda keys, _: logger.info("JWKS file read: %d key(s)", len(keys)),
        )

    async def key_for(self, token: str) -> PyJWK | bytes:
        keys = self._file.current()
        if not keys:
            raise CredentialsRefusedError(f"the JWKS file {self._file.path} holds no usable key")
        kid = _key_id(token)
        if kid is None and len(keys) == 1:
            return next(iter(keys.values()))
        key = keys.get(kid)
        if key is None:
            raise CredentialsRefusedError(f"no RS256 key with kid {kid!r} in the JWKS")
        return key


class JwksUrl:
    """RS256 with the keys of a JWKS URL, through `PyJWKClient`'s cache."""

    algorithm = RS256

    def __init__(self, url: str) -> None:
        self._client = PyJWKClient(url, timeout=JWKS_FETCH_TIMEOUT, lifespan=JWKS_CACHE_SECONDS)

    async def key_for(self, token: str) -> PyJWK | bytes:
        _key_id(token)  # a token whose header does not parse costs no fetch
        try:
            key = await asyncio.to_thread(self._client.get_signing_key_from_jwt, token)
        except PyJWKClientConnectionError as exc:
            logger.warning("the JWKS could not be fetched: %s", exc)
            raise RequestRefusedError(
                503,
                ErrorCode.SERVICE_UNAVAILABLE,
                "the keys that check tokens are unavailable; try again later",
                headers=unavailable_headers(),
            ) from None
        except PyJWTError as exc:
            raise CredentialsRefusedError(f"no usable key in the JWKS: {exc}") from None
        if not _is_rs256(key):
            raise CredentialsRefusedError("the JWKS key for this token is not an RS256 key")
        return key


def caller_from_claims(claims: Mapping[str, Any], *, tenants_claim: str, role_claim: str) -> Caller:
    """The caller a verified token's claims describe; `CredentialsRefusedError` when the
    tenants are not a non-empty list of UUID strings or the role is not `read`/`write`."""
    listed = claims.get(tenants_claim)
    if not isinstance(listed, list) or not listed or not all(isinstance(t, str) for t in listed):
        raise CredentialsRefusedError(f"claim {tenants_claim!r} is not a list of tenant ids")
    read = [uuid_of_text(t) for t in listed]
    if None in read:
        raise CredentialsRefusedError(f"claim {tenants_claim!r} holds a non-UUID")
    tenants = frozenset(TenantId(t) for t in read if t is not None)
    role = claims.get(role_claim)
    # A list or an object is no role: checked before the lookup, which would hash it.
    if not isinstance(role, str) or role not in {r.value for r in Role}:
        raise CredentialsRefusedError(f"claim {role_claim!r} is not 'read' or 'write'")
    subject = claims.get("sub")
    return Caller(
        subject=subject if isinstance(subject, str) else None, tenants=tenants, role=Role(role)
    )


class JwtVerifier:
    """Checks a token's signature (with `keys`' one algorithm), expiry, issuer and audience,
    then reads the caller from its claims."""

    def __init__(
        self,
        keys: TokenKeys,
        *,
        issuer: str | None,
        audience: str | None,
        tenants_claim: str,
        role_claim: str,
    ) -> None:
        self._keys = keys
        self._issuer = issuer
        self._audience = audience
        self._tenants_claim = tenants_claim
        self._role_claim = role_claim
        self._required = [
            "exp",
            *(["iss"] if issuer is not None else []),
            *(["aud"] if audience is not None else []),
        ]

    async def verify(self, credential: str) -> Caller:
        """The caller of the token `credential`, or `CredentialsRefusedError`."""
        key = await self._keys.key_for(credential)
        try:
            claims = jwt.decode(
                credential,
                key,
                algorithms=[self._keys.algorithm],
                issuer=self._issuer,
                audience=self._audience,
                options={
                    "require": self._required,
                    "verify_aud": self._audience is not None,
                    "verify_iat": False,  # `check_times`, with the clock skew
                    "verify_nbf": False,
                },
            )
        except PyJWTError as exc:
            raise CredentialsRefusedError(f"token not valid: {exc}") from None
        check_times(claims, time.time())
        return caller_from_claims(
            claims, tenants_claim=self._tenants_claim, role_claim=self._role_claim
        )


# How far ahead of this server's clock an issuer's may run: a token it has just issued
# says `iat` (and often `nbf`) of its own now, which is then in the future here.
CLOCK_SKEW_SECONDS = 60


def check_times(claims: Mapping[str, Any], now: float) -> None:
    """`CredentialsRefusedError` when a time claim (`exp`, `iat`, `nbf`) is no number of
    seconds (a boolean, NaN or an infinity is none), or the token was issued (`iat`) or
    is valid from (`nbf`) later than `CLOCK_SKEW_SECONDS` after `now`. Expiry is PyJWT's
    to check, to the second."""
    for name in ("exp", "iat", "nbf"):
        value = claims.get(name)
        if value is not None and not _is_seconds(value):
            raise CredentialsRefusedError(f"token not valid: {name} must be a number of seconds")
    for name, what in (("iat", "issued"), ("nbf", "valid from")):
        value = claims.get(name)
        if value is not None and value > now + CLOCK_SKEW_SECONDS:
            # In integers: a JSON integer may be too large for a float.
            ahead = int(value) - int(now)
            raise CredentialsRefusedError(
                f"token not valid: {what} {ahead} s ahead of this server's clock ({name}), "
                f"more than the {CLOCK_SKEW_SECONDS} s it allows"
            )


def _is_seconds(value: object) -> bool:
    """Whether a time claim's `value` is a number of seconds: an integer (of any size) or a
    finite float. NaN compares false with every time, so an `nbf` of NaN was never ahead."""
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and math.isfinite(value))


def _is_url(value: str) -> bool:
    return "://" in value


def _token_keys(settings: Settings) -> TokenKeys:
    secret, jwks = settings.jwt_secret, settings.jwt_jwks
    if (secret is None) == (jwks is None):
        raise InvalidInputError(
            "REDSTRING_AUTH=jwt needs exactly one of REDSTRING_JWT_SECRET (HS256) and "
            "REDSTRING_JWT_JWKS (RS256: a JWKS file or an http(s) URL)"
        )
    if secret is not None:
        raw = secret.get_secret_value().encode("utf-8")
        if len(raw) < MIN_SECRET_BYTES:
            raise InvalidInputError(
                f"REDSTRING_JWT_SECRET must be at least {MIN_SECRET_BYTES} bytes for HS256"
            )
        return SharedSecret(raw)
    assert jwks is not None
    if not _is_url(jwks):
        return JwksFile(Path(jwks))
    parts = urlsplit(jwks)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InvalidInputError(
            f"REDSTRING_JWT_JWKS must be a file or an http(s) URL: {shown_url(jwks)}"
        )
    if holds_userinfo(jwks):
        raise InvalidInputError(
            "REDSTRING_JWT_JWKS must be a URL without a user or password (a JWKS is public "
            f"keys, fetched without credentials): {shown_url(jwks)}"
        )
    if parts.scheme == "http" and not is_loopback_name(parts.hostname or ""):
        logger.warning(
            "REDSTRING_JWT_JWKS is fetched over plain http: whoever sits on the path can "
            "substitute the keys; use https"
        )
    return JwksUrl(jwks)


def jwt_verifier(settings: Settings) -> JwtVerifier:
    """The verifier the `jwt_*` settings describe; `InvalidInputError` for settings it
    cannot honour (neither or both key settings, a short secret, an unreadable JWKS)."""
    return JwtVerifier(
        _token_keys(settings),
        issuer=settings.jwt_issuer,
        audience=settings.jwt_audience,
        tenants_claim=settings.jwt_tenants_claim,
        role_claim=settings.jwt_role_claim,
    )
