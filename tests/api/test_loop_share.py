"""A large request shares the event loop: its resolvers' work is spread over many loop
turns, so other tasks (a `/healthz` request among them) run meanwhile, and its
DataLoaders still make one store call per depth."""

from __future__ import annotations

import asyncio
from typing import Any

from redstring.api.context import RequestContext
from redstring.api.limits import Limits
from redstring.api.schema.build import build_schema
from redstring.composition.client import Redstring
from redstring.testing import CountingGraphStore
from tests.api.support import DEMO, services_with_graph

# 5 x 20 matches, two hops: a few hundred resolver turns.
WALK = (
    "query ($t: ID!) { "
    + " ".join(
        f'a{i}: retrieve(query: "Acme", tenantId: $t, k: 20) {{ matches {{ entity {{ name '
        "relationships(first: 5) { relationshipType target { name "
        "relationships(first: 5) { target { name } } } } } } }"
        for i in range(5)
    )
    + " }"
)


async def _run(services: Redstring, limits: Limits) -> tuple[dict[str, Any], int, RequestContext]:
    """The walk's data, how many loop turns a probe task saw while it ran, its context."""
    schema = build_schema(Limits(max_cost=100_000))
    context = RequestContext(client=services, limits=limits)
    loop_turns = 0
    running = True

    async def probe() -> None:
        nonlocal loop_turns
        while running:
            await asyncio.sleep(0)
            loop_turns += 1

    prober = asyncio.create_task(probe())
    result = await schema.execute(WALK, variable_values={"t": DEMO}, context_value=context)
    running = False
    await prober
    assert result.errors is None
    assert result.data is not None
    return result.data, loop_turns, context


async def test_a_large_request_is_spread_over_loop_turns_in_one_store_call_per_depth(
    demo_services: Redstring,
) -> None:
    at_once = CountingGraphStore(demo_services.graph)
    whole, _, _ = await _run(services_with_graph(demo_services, at_once), Limits(loop_slice=60.0))
    counting = CountingGraphStore(demo_services.graph)
    # A slice of 0 s lets one resolver through per loop turn.
    spread, loop_turns, context = await _run(
        services_with_graph(demo_services, counting), Limits(loop_slice=0.0)
    )
    assert spread == whole
    # The same store calls as in one go: one `relationships_of` per depth.
    assert counting.calls == at_once.calls
    assert counting.calls["relationships_of"] == 2
    turns = context.loop_share.turns
    assert turns > 300  # 5 retrieves, 100 first hops, up to 500 second hops
    # With a slice of 0 s, only a turn that finds the share idle (none queued, no slice
    # open) goes through at once: a few per depth.
    assert turns - context.loop_share.waits <= 10
    # The probe ran between every two of them.
    assert loop_turns >= turns


async def test_each_match_s_ranges_take_a_turn(demo_services: Redstring) -> None:
    """`matchedRanges` is worked out a match a turn: a retrieve of many matches with long
    texts spreads it over loop turns, and the request's deadline can cancel it between."""
    schema = build_schema(Limits())
    query = (
        'query ($t: ID!) { retrieve(query: "Acme", tenantId: $t, k: 20, mode: LEXICAL) '
        "{ matches { matchedText matchedRanges { start end } } } }"
    )
    plain = query.replace(" matchedRanges { start end }", "")
    turns = {}
    for name, document in (("with", query), ("without", plain)):
        context = RequestContext(client=demo_services, limits=Limits())
        result = await schema.execute(document, variable_values={"t": DEMO}, context_value=context)
        assert result.errors is None
        assert result.data is not None
        matches = result.data["retrieve"]["matches"]
        turns[name] = context.loop_share.turns
    ranged = sum(1 for match in matches if match["matchedText"] is not None)
    assert ranged >= 2
    assert turns["with"] - turns["without"] == ranged
