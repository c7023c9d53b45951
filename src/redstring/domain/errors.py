"""The errors redstring raises on purpose; each says what is wrong in the caller's terms."""

from __future__ import annotations

from collections.abc import Iterable
from uuid import UUID


class RedstringError(Exception):
    """Base of every error redstring raises deliberately."""


class InvalidInputError(RedstringError, ValueError):
    """The caller asked for something that cannot be done (blank query, negative k, ...)."""


class DimensionMismatchError(InvalidInputError):
    """Two vector dimensions that must agree do not."""

    def __init__(self, expected: int, actual: int, what: str) -> None:
        super().__init__(f"{what} has dimension {actual}, expected {expected}")
        self.expected = expected
        self.actual = actual


class MissingEndpointError(InvalidInputError):
    """A relationship names an entity that does not exist in its tenant."""

    def __init__(self, missing: Iterable[UUID]) -> None:
        self.missing = sorted({str(m) for m in missing})
        super().__init__(
            "relationship endpoint(s) not found in this tenant: " + ", ".join(self.missing)
        )


class StoreUnavailableError(RedstringError):
    """A backing store did not answer (down, unreachable or timed out)."""
