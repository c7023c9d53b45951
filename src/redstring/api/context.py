"""`RequestContext`: what every resolver of one GraphQL request can reach."""

from __future__ import annotations

from dataclasses import dataclass, field

from redstring.api.authorization import Caller
from redstring.api.limits import Limits
from redstring.api.loaders import Loaders
from redstring.api.loop_share import LoopShare
from redstring.composition.client import Redstring


@dataclass
class RequestContext:
    """The client, the per-request loaders, the limits and the caller's identity.

    Resolvers reach stores only through `client` (composition) and
    `loaders`; `caller` is what `check_tenant_access` checks; `loop_share` is the
    turn they take after their awaits, before completing their part of the response.
    """

    client: Redstring
    limits: Limits = field(default_factory=Limits)
    caller: Caller = field(default_factory=Caller.anonymous)
    loaders: Loaders = field(init=False)
    loop_share: LoopShare = field(init=False)
    # Per field of the operation (its response path without list indexes): which
    # relationship ends it selects, worked out once rather than once per entity.
    selected_ends: dict[tuple[str, ...], frozenset[str]] = field(init=False, default_factory=dict)

    def __post_init__(self) -> None:
        self.loop_share = LoopShare(self.limits.loop_slice)
        self.loaders = Loaders(self.client.graph, self.loop_share)
