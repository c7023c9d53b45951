"""Stores whose server can start again under a running process."""

from __future__ import annotations

from typing import Protocol, runtime_checkable


@runtime_checkable
class StartReads(Protocol):
    """A store that can tell when its database last started.

    A database started again has lost what `Redstring.warm_up` filled (planned
    statements, caches), whether or not any read failed meanwhile. Optional: callers
    check `isinstance(store, StartReads)`; a store that lives in the process (in
    memory) never starts again and does not offer it.
    """

    async def last_started(self) -> str:
        """When the store's database last started, as an opaque value: two reads answer
        the same value exactly when it has not started again between them. One cheap
        read; it fails as the store's reads do (`StoreUnavailableError`)."""
        ...
