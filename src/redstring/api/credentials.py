"""What a credential verifier is: one bearer credential in, the `Caller` it proves out."""

from __future__ import annotations

from typing import Protocol

from redstring.api.authorization import Caller


class CredentialsRefusedError(Exception):
    """A credential was presented and is not accepted; the message is for the log only."""


class CredentialVerifier(Protocol):
    """Turns one bearer credential into the caller it proves, or raises
    `CredentialsRefusedError` (or a `RequestRefusedError` when the refusal is not the
    caller's fault, such as a key service that does not answer)."""

    async def verify(self, credential: str) -> Caller: ...
