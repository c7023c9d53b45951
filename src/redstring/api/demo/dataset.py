"""`demo_dataset`: the demo tenant's entities and relationships, the same on every run."""

from __future__ import annotations

import itertools
import random
import uuid

from redstring.api.demo.names import (
    COMPANIES,
    COUNTRIES,
    FIRST_NAMES,
    INDUSTRIES,
    LAST_NAMES,
    ROLES,
)
from redstring.composition.client import Redstring
from redstring.domain.entity import Entity
from redstring.domain.ids import (
    EntityId,
    RelationshipId,
    TenantId,
    entity_id_for,
    relationship_id_for,
)
from redstring.domain.properties import PropertyValue
from redstring.domain.relationship import Relationship

DEMO_TENANT_ID = TenantId(uuid.UUID("00000000-0000-4000-8000-000000000001"))
PEOPLE = 120
# A fixed seed: the dataset is part of the README's promises, so it must not drift.
_SEED = 42024


class _Graph:
    """Entities and relationships of one tenant under construction, keyed by derived id."""

    def __init__(self, tenant_id: TenantId) -> None:
        self.tenant_id = tenant_id
        self.entities: dict[EntityId, Entity] = {}
        self.relationships: dict[RelationshipId, Relationship] = {}

    def add(
        self, name: str, entity_type: str, description: str, **properties: PropertyValue
    ) -> Entity:
        entity = Entity(
            id=entity_id_for(self.tenant_id, entity_type, name),
            tenant_id=self.tenant_id,
            name=name,
            entity_type=entity_type,
            description=description,
            properties=properties,
        )
        self.entities.setdefault(entity.id, entity)
        return self.entities[entity.id]

    def link(
        self,
        source: Entity,
        relationship_type: str,
        target: Entity,
        *,
        confidence: float = 1.0,
        **properties: PropertyValue,
    ) -> None:
        if source.id == target.id:
            return
        rel_id = relationship_id_for(self.tenant_id, source.id, relationship_type, target.id)
        self.relationships.setdefault(
            rel_id,
            Relationship(
                id=rel_id,
                tenant_id=self.tenant_id,
                source_entity_id=source.id,
                target_entity_id=target.id,
                relationship_type=relationship_type,
                confidence=confidence,
                properties=properties,
            ),
        )


def _places(graph: _Graph, rng: random.Random) -> dict[str, Entity]:
    cities: dict[str, Entity] = {}
    for country_name, city_names in COUNTRIES.items():
        country = graph.add(
            country_name, "country", f"{country_name}, a country of the demo world."
        )
        for city_name in city_names:
            population = rng.randrange(40_000, 2_500_000, 1_000)
            city = graph.add(
                city_name, "city", f"{city_name}, a city in {country_name}.", population=population
            )
            graph.link(city, "LOCATED_IN", country)
            cities[city_name] = city
    return cities


def _companies(
    graph: _Graph, rng: random.Random, cities: dict[str, Entity]
) -> tuple[dict[str, Entity], dict[str, list[Entity]]]:
    industries = {
        name: graph.add(name, "industry", f"The {name.lower()} industry.") for name in INDUSTRIES
    }
    companies: dict[str, Entity] = {}
    products_by_industry: dict[str, list[Entity]] = {name: [] for name in INDUSTRIES}
    for row in COMPANIES:
        company = graph.add(
            row.name,
            "company",
            f"{row.name} is a {row.industry.lower()} company headquartered in {row.city}, "
            f"founded in {row.founded}.",
            founded=row.founded,
            **({"aliases": row.aliases} if row.aliases else {}),
        )
        companies[row.name] = company
        graph.link(company, "HEADQUARTERED_IN", cities[row.city])
        graph.link(company, "IN_INDUSTRY", industries[row.industry])
        brand = row.name.split()[0]
        kinds = INDUSTRIES[row.industry]
        for kind in rng.sample(kinds, k=min(len(kinds), rng.randint(2, 3))):
            product = graph.add(
                f"{brand} {kind}",
                "product",
                f"{kind} made by {row.name}.",
                launched=rng.randint(max(row.founded, 1990), 2024),
            )
            graph.link(company, "MAKES", product)
            products_by_industry[row.industry].append(product)
    return companies, products_by_industry


def _market(
    graph: _Graph,
    rng: random.Random,
    companies: dict[str, Entity],
    products_by_industry: dict[str, list[Entity]],
) -> None:
    names = sorted(companies)
    for _ in range(45):
        supplier, customer = rng.sample(names, k=2)
        graph.link(
            companies[supplier],
            "SUPPLIES",
            companies[customer],
            confidence=round(rng.uniform(0.6, 1.0), 2),
        )
    for _ in range(6):
        buyer, bought = rng.sample(names, k=2)
        graph.link(companies[buyer], "ACQUIRED", companies[bought], year=rng.randint(1990, 2024))
    for products in products_by_industry.values():
        for left, right in itertools.pairwise(products):
            graph.link(left, "COMPETES_WITH", right, confidence=round(rng.uniform(0.5, 0.95), 2))


def _people(
    graph: _Graph, rng: random.Random, cities: dict[str, Entity], companies: dict[str, Entity]
) -> None:
    full_names = sorted(f"{first} {last}" for first in FIRST_NAMES for last in LAST_NAMES)
    chosen = rng.sample(full_names, k=PEOPLE)
    rows = {row.name: row for row in COMPANIES}
    company_names = sorted(companies)
    people: list[Entity] = []
    for index, name in enumerate(chosen):
        # The first people found the companies, one each; the rest are hired.
        company_name = company_names[index % len(company_names)]
        founder = index < len(company_names)
        role = "Founder" if founder else rng.choice(ROLES)
        home = rows[company_name].city if rng.random() < 0.7 else rng.choice(sorted(cities))
        person = graph.add(
            name,
            "person",
            f"{role} at {company_name}, living in {home}.",
            born=rng.randint(1940, 2000),
        )
        people.append(person)
        graph.link(person, "WORKS_AT", companies[company_name], role=role)
        graph.link(person, "LIVES_IN", cities[home])
        if founder:
            graph.link(person, "FOUNDED", companies[company_name], year=rows[company_name].founded)
    for _ in range(70):
        left, right = rng.sample(people, k=2)
        graph.link(left, "KNOWS", right, confidence=round(rng.uniform(0.3, 1.0), 2))


def demo_dataset(tenant_id: TenantId = DEMO_TENANT_ID) -> tuple[list[Entity], list[Relationship]]:
    """The demo entities and relationships (a few hundred of each) in `tenant_id`."""
    rng = random.Random(_SEED)
    graph = _Graph(tenant_id)
    cities = _places(graph, rng)
    companies, products = _companies(graph, rng, cities)
    _market(graph, rng, companies, products)
    _people(graph, rng, cities, companies)
    return list(graph.entities.values()), list(graph.relationships.values())


async def load_demo(services: Redstring, tenant_id: TenantId = DEMO_TENANT_ID) -> int:
    """Write the demo dataset into `services`; idempotent. Returns how many entities."""
    entities, relationships = demo_dataset(tenant_id)
    await services.upsert(entities, relationships)
    return len(entities)
