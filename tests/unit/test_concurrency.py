"""`while_finishing`: which failure is raised when the earlier work and the work beside it
both fail, and that the other is neither lost nor left for asyncio to log."""

from __future__ import annotations

import asyncio
import gc

import pytest

from redstring import StoreUnavailableError
from redstring.composition.concurrency import while_finishing
from tests.ingest.support import loop_errors


async def _failing(error: BaseException) -> None:
    await asyncio.sleep(0)
    raise error


async def test_when_both_fail_the_earlier_is_raised_and_the_other_noted_not_left() -> None:
    with loop_errors() as reported:
        finishing = asyncio.ensure_future(_failing(StoreUnavailableError("vector write failed")))
        with pytest.raises(StoreUnavailableError, match="vector write failed") as raised:
            await while_finishing(finishing, _failing(OSError("source read failed")))
        notes = getattr(raised.value, "__notes__", [])
        del raised, finishing  # the traceback's frames hold the task of the work
        gc.collect()
        await asyncio.sleep(0)
    assert [context["message"] for context in reported] == []
    assert len(notes) == 1
    assert "OSError: source read failed" in notes[0]


async def test_the_work_s_failure_alone_is_raised_as_it_is() -> None:
    finishing = asyncio.ensure_future(asyncio.sleep(0))
    with pytest.raises(OSError, match="source read failed") as raised:
        await while_finishing(finishing, _failing(OSError("source read failed")))
    assert not hasattr(raised.value, "__notes__")


async def test_the_earlier_failure_alone_is_raised_without_a_note() -> None:
    finishing = asyncio.ensure_future(_failing(StoreUnavailableError("vector write failed")))
    with pytest.raises(StoreUnavailableError) as raised:
        await while_finishing(finishing, asyncio.sleep(0, "read"))
    assert not hasattr(raised.value, "__notes__")
