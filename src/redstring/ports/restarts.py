"""Stores whose server can start again under a running process."""

from __future__ import annotations

from collections.abc import Hashable
from typing import NamedTuple, Protocol, runtime_checkable


class ServerStart(NamedTuple):
    """Which server answered (`server`) and when its process started (`started`), both
    opaque: a server started again answers another `started`."""

    server: str
    started: str


@runtime_checkable
class StartReads(Protocol):
    """A store that can tell when the server answering it started.

    A server started again has lost what `Redstring.warm_up` filled (planned
    statements, caches), whether or not any read failed meanwhile. Optional: callers
    check `isinstance(store, StartReads)`; a store that lives in the process (in
    memory) never starts again and does not offer it.
    """

    @property
    def start_source(self) -> Hashable:
        """What this store reads its start through (opaque): stores with equal sources
        read the same server's start, so one read a check serves them all."""
        ...

    async def last_started(self) -> ServerStart | None:
        """The server that answers this read and when it started; None when the server
        does not tell. One cheap read; it fails as the store's reads do
        (`StoreUnavailableError`)."""
        ...
