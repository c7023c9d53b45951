"""Read-your-writes across processes: the store states a unit of work reads after, and
the states its writes leave.

A store that replicates (Neo4j with followers or read replicas) may answer a
read from a member that has not yet applied a write made through another
process. Its adapter names the state each write leaves as opaque positions
(Neo4j's bookmarks); a unit of work (one API request) that carries the
positions of earlier writes reads at least that state. Within one process an
adapter keeps that order by itself; the positions are for crossing processes.

`consistent_after` opens such a unit of work for the current task and the
tasks it starts; adapters read `required_positions()` before a read and call
`record_written()` after a write. Outside of one, both do nothing. Stores
that do not replicate (in memory) ignore them.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field


@dataclass
class Consistency:
    """What one unit of work reads after (`after`) and what its writes left (`written`,
    each position once, in the order the writes finished)."""

    after: tuple[str, ...] = ()
    written: list[str] = field(default_factory=list)

    def record(self, positions: Iterable[str]) -> None:
        for position in positions:
            if position not in self.written:
                self.written.append(position)


_current: ContextVar[Consistency | None] = ContextVar("redstring_consistency", default=None)


@contextmanager
def consistent_after(positions: Sequence[str] = ()) -> Iterator[Consistency]:
    """A unit of work whose reads see at least the state `positions` name; yields it, so
    that its `written` positions can be read at its end."""
    unit = Consistency(after=tuple(positions))
    token = _current.set(unit)
    try:
        yield unit
    finally:
        _current.reset(token)


def required_positions() -> tuple[str, ...]:
    """The positions the current unit of work reads after (none outside of one)."""
    unit = _current.get()
    return unit.after if unit is not None else ()


def written_positions() -> tuple[str, ...]:
    """The positions the current unit of work's writes left so far (none outside one)."""
    unit = _current.get()
    return tuple(unit.written) if unit is not None else ()


def record_written(positions: Iterable[str]) -> None:
    """Note the positions a write of the current unit of work left (ignored outside one)."""
    unit = _current.get()
    if unit is not None:
        unit.record(positions)
