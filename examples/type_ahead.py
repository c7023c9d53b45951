"""Search as you type against a running redstring: one `retrieve` a keystroke.

Start the demo (`make serve`), then:

    .venv/bin/python examples/type_ahead.py "Glasswing Software"

Each line is what has been typed so far and the first match for it, the part of its
text the query matched in brackets (`matchedRanges`).
"""

from __future__ import annotations

import argparse

import httpx

DEMO_TENANT = "00000000-0000-4000-8000-000000000001"
QUERY = """
query TypeAhead($q: String!, $tenant: ID!) {
  retrieve(query: $q, tenantId: $tenant, k: 1) {
    matches {
      matchedText matchedProperty matchedRanges { start end }
      entity { name entityType }
    }
  }
}
"""


def marked(text: str, ranges: list[dict[str, int]]) -> str:
    """`text` with each range in brackets. The offsets count UTF-16 code units, as
    JavaScript's `text.slice(start, end)` does: Python slices the UTF-16 bytes."""
    units = text.encode("utf-16-le")
    shown, last = "", 0
    for part in ranges:
        start, end = 2 * part["start"], 2 * part["end"]
        shown += units[last:start].decode("utf-16-le") + "["
        shown += units[start:end].decode("utf-16-le") + "]"
        last = end
    return shown + units[last:].decode("utf-16-le")


def first_match(client: httpx.Client, typed: str, tenant: str = DEMO_TENANT) -> str:
    """The name and type of the best match for `typed`, and the other text of it the
    query matched when not its name (an alias, a property value), the part matched in
    brackets; `-` when none."""
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
    match = matches[0]
    entity = match["entity"]
    text = match["matchedText"]
    if text is None:  # the semantic channel's alone: nothing to mark
        return f"{entity['name']} ({entity['entityType']})"
    shown = marked(text, match["matchedRanges"])
    if match["matchedProperty"] is None:  # the name
        return f"{shown} ({entity['entityType']})"
    return (
        f"{entity['name']} ({entity['entityType']}), matched {match['matchedProperty']} {shown!r}"
    )


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
