"""The demo dataset: deterministic, a few hundred entities of several types, all connected."""

from __future__ import annotations

from collections import Counter

from redstring.api.demo import DEMO_TENANT_ID, demo_dataset
from redstring.domain.ids import entity_id_for


def test_the_demo_is_the_same_on_every_run() -> None:
    assert demo_dataset() == demo_dataset()


def test_the_demo_has_a_few_hundred_entities_of_several_types() -> None:
    entities, relationships = demo_dataset()
    types = Counter(e.entity_type for e in entities)
    assert 250 <= len(entities) <= 500
    assert {"company", "person", "product", "city", "country", "industry"} == set(types)
    assert len(relationships) >= len(entities)
    assert {e.tenant_id for e in entities} == {DEMO_TENANT_ID}
    ids = {e.id for e in entities}
    assert len(ids) == len(entities)
    assert all(r.source_entity_id in ids and r.target_entity_id in ids for r in relationships)


def test_acme_corp_is_there_under_its_derived_id() -> None:
    entities, relationships = demo_dataset()
    acme = entity_id_for(DEMO_TENANT_ID, "company", "Acme Corp")
    assert any(e.id == acme and e.name == "Acme Corp" for e in entities)
    touching = [r for r in relationships if acme in (r.source_entity_id, r.target_entity_id)]
    assert len(touching) >= 5
