"""GraphiQL in headless Chromium: the README's query typed, run, and its answer shown."""

from __future__ import annotations

import json
from pathlib import Path

from redstring.api.demo import DEMO_TENANT_ID
from tests.e2e.conftest import Launch
from tests.processes import REPO, free_loopback_port, node_script, redstring_server

SCREENSHOT = REPO / "test-output" / "e2e" / "graphiql.png"
BROWSER_TIMEOUT = 90.0

README_QUERY = f"""{{
  retrieve(query: "ACME Corporation", tenantId: "{DEMO_TENANT_ID}", k: 5) {{
    matches {{
      score semantic lexical
      entity {{
        name entityType
        relationships(first: 5) {{ source {{ name }} relationshipType target {{ name }} }}
      }}
    }}
  }}
}}"""


def test_graphiql_runs_the_readme_query_offline(
    chromium: Path, graphiql_files: None, launch: Launch
) -> None:
    port = free_loopback_port()
    server = launch(redstring_server(port))
    server.wait_until_answering(f"http://127.0.0.1:{port}/readyz")
    SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
    SCREENSHOT.unlink(missing_ok=True)

    browser = launch(
        node_script(
            "chromium",
            "graphiql.mjs",
            f"http://127.0.0.1:{port}/graphql",
            str(SCREENSHOT),
            QUERY=README_QUERY,
            EXPECT="Acme Corp",
            CHROMIUM=str(chromium),
            TIMEOUT_MS="30000",
        )
    )
    status = browser.wait(timeout=BROWSER_TIMEOUT)
    report = browser.wait_for_json("blocked", timeout=0)

    assert status == 0, report.get("error") or browser.output
    assert report["editor"] == README_QUERY  # typed as written, no brackets added
    assert '"name": "Acme Corp"' in report["shown"]  # what the result pane shows
    [first, *_] = json.loads(report["result"])["data"]["retrieve"]["matches"]
    assert first["entity"]["name"] == "Acme Corp"
    assert {
        "source": {"name": "Acme Corp"},
        "relationshipType": "HEADQUARTERED_IN",
        "target": {"name": "Port Aldmere"},
    } in first["entity"]["relationships"]
    assert report["blocked"] == []  # no request left the machine: the page works offline
    assert report["consoleErrors"] == []
    assert SCREENSHOT.read_bytes().startswith(b"\x89PNG")
