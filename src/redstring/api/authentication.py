"""Who the caller of an operation is: `Authorization: Bearer <credential>` to a `Caller`.

`REDSTRING_AUTH` picks the verifier: none (every caller is `Caller.anonymous()`),
an API key (`api_keys.py`) or a JWT (`jwt_tokens.py`). A credential that is
missing or not accepted is refused with HTTP 401 and `UNAUTHENTICATED`; the
client is told only that, and the reason is logged at INFO, because a message
naming the failed check helps whoever is guessing keys more than the caller.
"""

from __future__ import annotations

import logging

from redstring.api.api_keys import api_key_verifier
from redstring.api.authorization import Caller
from redstring.api.credentials import CredentialsRefusedError, CredentialVerifier
from redstring.api.errors import ErrorCode, RequestRefusedError
from redstring.api.jwt_tokens import jwt_verifier
from redstring.api.protections import is_loopback_name
from redstring.api.settings import AuthMode, Settings, variable_of
from redstring.domain.errors import InvalidInputError

logger = logging.getLogger("redstring.api")

REQUIRED_MESSAGE = "credentials required: send Authorization: Bearer <credential>"
REFUSED_MESSAGE = "credentials not accepted"
NO_AUTH_WARNING = (
    "REDSTRING_AUTH=none: every caller may read and write every tenant; acceptable only "
    "for a demo on a loopback address (this server listens on %s)"
)


class Authenticator:
    """The caller of each request, from its `Authorization` header; built once per app.

    Without a verifier (`REDSTRING_AUTH=none`) every request is anonymous and any
    `Authorization` header is ignored.
    """

    def __init__(self, verifier: CredentialVerifier | None = None) -> None:
        self._verifier = verifier

    async def caller(self, authorization: str | None) -> Caller:
        """The caller `authorization` (the header's value) proves; else `RequestRefusedError`
        (401 `UNAUTHENTICATED`)."""
        if self._verifier is None:
            return Caller.anonymous()
        credential = bearer_credential(authorization)
        if credential is None:
            logger.info("credentials refused: no bearer credential")
            raise _unauthenticated(REQUIRED_MESSAGE, presented=False)
        try:
            return await self._verifier.verify(credential)
        except CredentialsRefusedError as refused:
            logger.info("credentials refused: %s", refused)
            raise _unauthenticated(REFUSED_MESSAGE, presented=True) from None


NO_AUTHENTICATION = Authenticator()


def bearer_credential(authorization: str | None) -> str | None:
    """The credential of an `Authorization: Bearer <credential>` header value (the scheme
    in any case, RFC 7235), or `None` when there is none."""
    if not authorization:
        return None
    scheme, _, credential = authorization.strip().partition(" ")
    credential = credential.strip()
    if scheme.lower() != "bearer" or not credential:
        return None
    return credential


def _unauthenticated(message: str, *, presented: bool) -> RequestRefusedError:
    # RFC 6750: the challenge names the error only when a token was presented.
    challenge = 'Bearer error="invalid_token"' if presented else "Bearer"
    return RequestRefusedError(
        401, ErrorCode.UNAUTHENTICATED, message, headers={"WWW-Authenticate": challenge}
    )


def build_authenticator(settings: Settings) -> Authenticator:
    """The authenticator `settings.auth` asks for, its keys read once here.

    Raises `InvalidInputError` for settings it cannot honour (a missing key file,
    both or neither of the JWT key settings, ...), so a server refuses to start
    rather than serving with a lock that does not close.
    """
    if settings.auth is AuthMode.APIKEY:
        return Authenticator(api_key_verifier(settings.api_keys_file))
    if settings.auth is AuthMode.JWT:
        return Authenticator(jwt_verifier(settings))
    return NO_AUTHENTICATION


# What a credential setting means the operator wanted, and the mode that reads it.
_CREDENTIAL_SETTINGS = (
    ("api_keys_file", AuthMode.APIKEY),
    ("jwt_secret", AuthMode.JWT),
    ("jwt_jwks", AuthMode.JWT),
)
_CREDENTIAL_OF = {AuthMode.APIKEY: "an API key", AuthMode.JWT: "a JWT"}


def check_auth_settings(settings: Settings) -> None:
    """Raise `InvalidInputError` when `build_authenticator` would (it reads the key file or
    JWKS file once; a JWKS URL is fetched only when the first token needs it), for a
    credential setting of a mode other than `REDSTRING_AUTH`'s (it would be ignored: with
    none every caller let in, with the other mode every caller holding that credential
    refused with nothing logged), and for a server that would serve everyone everything by
    mistake: an address other machines can reach without `REDSTRING_AUTH` said (none,
    the default, is for a loopback demo; `REDSTRING_AUTH=none` said outright is taken at
    its word)."""
    for name, mode in _CREDENTIAL_SETTINGS:
        if mode is not settings.auth and getattr(settings, name) is not None:
            raise InvalidInputError(_ignored(name, mode, settings.auth))
    if (
        settings.auth is AuthMode.NONE
        and "auth" not in settings.model_fields_set
        and not is_loopback_name(settings.host)
    ):
        raise InvalidInputError(
            f"host {settings.host} is reachable from other machines, and REDSTRING_AUTH "
            "is not set (none, the default, lets every caller read and write every "
            "tenant): set REDSTRING_AUTH=apikey or jwt (docs/security.md), or "
            "REDSTRING_AUTH=none to serve them all without authentication"
        )
    build_authenticator(settings)


def _ignored(name: str, mode: AuthMode, in_force: AuthMode) -> str:
    """Why the setting `name`, read in `mode` only, is refused while `in_force` is."""
    said = f"{variable_of(name)} is set, but REDSTRING_AUTH is {in_force.value}, so it would be "
    if in_force is AuthMode.NONE:
        return f"{said}ignored and every caller let in: set REDSTRING_AUTH={mode.value}"
    return (
        f"{said}ignored and a caller sending {_CREDENTIAL_OF[mode]} refused: unset it, or "
        f"set REDSTRING_AUTH={mode.value}"
    )
