"""A real Apollo gateway composes redstring with a second subgraph and answers across both."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx

from redstring.api.demo import DEMO_TENANT_ID
from redstring.domain.ids import entity_id_for
from tests.e2e.conftest import Launch
from tests.processes import free_loopback_port, node_script, redstring_server

DEMO = str(DEMO_TENANT_ID)
ACME_ID = str(entity_id_for(DEMO_TENANT_ID, "company", "Acme Corp"))
PORT_ALDMERE_ID = str(entity_id_for(DEMO_TENANT_ID, "city", "Port Aldmere"))
QUERY_TIMEOUT = 30.0

# Starts in the other subgraph (`featured` knows only the keys) and reaches
# redstring's `name` and `relationships` through `_entities`, and `retrieve`.
FEDERATED_QUERY = """
query ($tenant: ID!) {
  featured {
    title
    entity {
      id
      tenantId
      name
      entityType
      relationships(direction: OUT) { relationshipType target { name } }
    }
  }
  retrieve(query: "ACME Corporation", tenantId: $tenant, k: 3) {
    matches { entity { name relationships(direction: OUT, types: ["HEADQUARTERED_IN"]) { target { name } } } }
  }
}
"""


def _post(url: str, query: str, **variables: Any) -> dict[str, Any]:
    response = httpx.post(url, json={"query": query, "variables": variables}, timeout=QUERY_TIMEOUT)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def test_a_gateway_query_spans_both_subgraphs(node_packages: Path, launch: Launch) -> None:
    port = free_loopback_port()
    redstring = launch(redstring_server(port, federation="true"))
    featured = launch(
        node_script(
            "featured subgraph",
            "featured-subgraph.mjs",
            FEATURED=json.dumps(
                [
                    {"title": "Company of the week", "tenantId": DEMO, "id": ACME_ID},
                    {"title": "City of the week", "tenantId": DEMO, "id": PORT_ALDMERE_ID},
                ]
            ),
        )
    )
    redstring_url = f"http://127.0.0.1:{port}"
    redstring.wait_until_answering(f"{redstring_url}/readyz")
    featured_url = featured.wait_for_json("ready")["ready"]
    gateway = launch(
        node_script(
            "gateway",
            "gateway.mjs",
            SUBGRAPHS=json.dumps(
                [
                    {"name": "redstring", "url": f"{redstring_url}/graphql"},
                    {"name": "featured", "url": featured_url},
                ]
            ),
        )
    )
    gateway_url = gateway.wait_for_json("ready")["ready"]

    body = _post(gateway_url, FEDERATED_QUERY, tenant=DEMO)

    assert "errors" not in body, body
    acme, port_aldmere = body["data"]["featured"]
    assert acme["title"] == "Company of the week"
    assert acme["entity"]["id"] == ACME_ID
    assert acme["entity"]["tenantId"] == DEMO
    assert (acme["entity"]["name"], acme["entity"]["entityType"]) == ("Acme Corp", "company")
    assert {"relationshipType": "HEADQUARTERED_IN", "target": {"name": "Port Aldmere"}} in acme[
        "entity"
    ]["relationships"]
    assert port_aldmere["entity"]["name"] == "Port Aldmere"
    assert port_aldmere["entity"]["relationships"] == [
        {"relationshipType": "LOCATED_IN", "target": {"name": "Valdoria"}}
    ]
    [first, *_] = body["data"]["retrieve"]["matches"]
    assert first["entity"] == {
        "name": "Acme Corp",
        "relationships": [{"target": {"name": "Port Aldmere"}}],
    }
