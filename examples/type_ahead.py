"""Search as you type against a running redstring: one `retrieve` a keystroke.

Start the demo (`make serve`), then:

    .venv/bin/python examples/type_ahead.py "Glasswing Software"

Each line is what has been typed so far and the first match for it.
"""

from __future__ import annotations

import argparse

import httpx

DEMO_TENANT = "00000000-0000-4000-8000-000000000001"
QUERY = """
query TypeAhead($q: String!, $tenant: ID!) {
  retrieve(query: $q, tenantId: $tenant, k: 1) {
    matches { matchedText matchedProperty entity { name entityType } }
  }
}
"""


def first_match(client: httpx.Client, typed: str, tenant: str = DEMO_TENANT) -> str:
    """The name and type of the best match for `typed`, and the other text of it the
    query matched when not its name (an alias, a property value); `-` when none."""
    response = client.post(
        "/graphql", json={"query": QUERY, "variables": {"q": typed, "tenant": tenant}}
    )
    response.raise_for_status()
    body = response.json()
    if "errors" in body:
        raise RuntimeError(body["errors"][0]["message"])
    matches = body["data"]["retrieve"]["matches"]
    if not matches:
        return "-"
    entity = matches[0]["entity"]
    shown = f"{entity['name']} ({entity['entityType']})"
    if matches[0]["matchedProperty"] is not None:
        shown += f", matched {matches[0]['matchedProperty']} {matches[0]['matchedText']!r}"
    return shown


def type_out(client: httpx.Client, text: str, tenant: str = DEMO_TENANT) -> list[tuple[str, str]]:
    """(typed so far, first match) for every keystroke of `text`, skipping blanks."""
    return [
        (text[:end], first_match(client, text[:end], tenant))
        for end in range(1, len(text) + 1)
        if text[:end].strip()
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("text", nargs="?", default="Glasswing Software")
    parser.add_argument("--url", default="http://127.0.0.1:8000")
    parser.add_argument("--tenant", default=DEMO_TENANT)
    args = parser.parse_args()
    with httpx.Client(base_url=args.url, timeout=10) as client:
        for typed, match in type_out(client, args.text, args.tenant):
            print(f"{typed!r:24} {match}")


if __name__ == "__main__":
    main()
