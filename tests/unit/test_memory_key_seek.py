"""The in-memory graph store's prefix seek (`_Tenant.keys_from`) answers, after any mix of
writes, deletes and seeks, exactly the keys with a block that begin with the prefix, in
key order."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from redstring.adapters.memory.graph_store import _Tenant
from redstring.domain.entity import Entity
from redstring.testing import make_entity, new_tenant

TENANT = new_tenant()
# Few letters, so that names share keys and blocks empty and fill again.
NAMES = st.text(alphabet="abc ", min_size=1, max_size=6).filter(str.strip)
STEPS = st.lists(
    st.one_of(
        st.tuples(st.just("write"), NAMES),
        st.tuples(st.just("delete"), NAMES),
        st.tuples(st.just("seek"), st.text(alphabet="abcp:w", max_size=3)),
    ),
    max_size=40,
)


@settings(max_examples=300, deadline=None)
@given(STEPS)
def test_a_seek_answers_the_keys_with_a_block_in_order(steps: list[tuple[str, str]]) -> None:
    tenant = _Tenant()
    stored: dict[str, Entity] = {}
    for action, text in steps:
        if action == "write":
            entity = stored.get(text) or make_entity(TENANT, text, "thing")
            if text in stored:
                tenant.unindex_entity(entity)
            tenant.index_entity(entity)
            stored[text] = entity
        elif action == "delete" and text in stored:
            tenant.unindex_entity(stored.pop(text))
        elif action == "seek":
            expected = sorted(key for key in tenant.blocks if key.startswith(text))
            assert list(tenant.keys_from(text)) == expected
    keys = {key for entity in stored.values() for key in entity.blocking_keys}
    assert set(tenant.blocks) == keys
    assert list(tenant.keys_from("")) == sorted(keys)
