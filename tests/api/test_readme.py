"""The README's quick-start query, read from README.md itself, returns what the README
says it returns: the first match and the edges it names, each in its own direction."""

from __future__ import annotations

import importlib.util
import json
import re
import shlex
import subprocess
import sys

from tests.api.support import GraphQLClient
from tests.processes import REPO

README = (REPO / "README.md").read_text(encoding="utf-8")
# `Source name -[TYPE]-> Target name`, as the README writes an edge.
EDGE = re.compile(r"`([^`]+?) -\[([A-Z_]+)\]-> ([^`]+?)`")


def _readme_query() -> str:
    """The first GraphQL block of the README: the one its quick start pastes into GraphiQL."""
    found = re.search(r"```graphql\n(.*?)```", README, re.S)
    assert found, "README.md has no ```graphql block"
    return found.group(1)


def _described_output() -> tuple[str, list[tuple[str, str, str]]]:
    """The first match's name and the (source, type, target) edges the README names."""
    start = README.index("The first match is ")
    paragraph = README[start : README.index("\n\n", start)]
    first = re.match(r"The first match is `([^`]+)`", paragraph)
    assert first, paragraph
    edges = EDGE.findall(paragraph)
    assert edges, f"the README names no edge as `A -[TYPE]-> B`: {paragraph}"
    return first.group(1), edges


def _squeezed(text: str) -> str:
    return " ".join(text.split())


def test_the_curl_command_sends_the_graphiql_query() -> None:
    curl = re.search(r"```sh\n(curl -s http://127\.0\.0\.1:8000/graphql.*?)```", README, re.S)
    assert curl, "README.md has no curl command for the query"
    argv = shlex.split(curl.group(1).replace("\\\n", " "))
    body = json.loads(argv[argv.index("-d") + 1])
    assert _squeezed(body["query"]) == _squeezed(_readme_query())


async def test_the_readme_query_returns_what_the_readme_describes(client: GraphQLClient) -> None:
    name, edges = _described_output()
    data = await client.data(_readme_query())
    first = data["retrieve"]["matches"][0]["entity"]
    assert first["name"] == name
    returned = {
        (r["source"]["name"], r["relationshipType"], r["target"]["name"])
        for r in first["relationships"]
    }
    for edge in edges:
        assert edge in returned, f"README says {edge}; the server returns {sorted(returned)}"
    # Every edge of the match touches it, whichever end it is.
    assert all(name in (source, target) for source, _, target in returned)
    # The README names each edge type the server returns for the first match.
    assert {t for _, t, _ in returned} == {t for _, t, _ in edges}


def _library_snippet() -> str:
    """The Python block of the README's library section."""
    section = README[README.index("## Use it as a library") :]
    found = re.search(r"```python\n(.*?)```", section, re.S)
    assert found, "the library section has no ```python block"
    return found.group(1)


def test_the_library_snippet_prints_what_the_readme_says() -> None:
    """The snippet runs as it is, in a fresh interpreter, and its first printed match is the
    one the README names after it."""
    said = re.search(r"The first line it prints is `([^`]+)`", README)
    assert said, "the README does not say what the library snippet prints first"
    done = subprocess.run(
        [sys.executable, "-c", _library_snippet()],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
        cwd=REPO,
    )
    lines = done.stdout.splitlines()
    assert len(lines) == 3, done.stdout
    assert lines[0].startswith(said.group(1) + " "), done.stdout


def _type_ahead_block() -> tuple[str, list[str]]:
    """The text the README types with examples/type_ahead.py, and the lines it shows."""
    found = re.search(
        r'```sh\n\.venv/bin/python examples/type_ahead\.py "([^"]+)"\n```\n\n```\n(.*?)```',
        README,
        re.S,
    )
    assert found, "README.md shows no examples/type_ahead.py run with its output"
    return found.group(1), found.group(2).splitlines()


def test_the_type_ahead_demo_prints_what_the_readme_shows() -> None:
    from starlette.testclient import TestClient

    from redstring.api import create_app
    from redstring.api.settings import Settings

    spec = importlib.util.spec_from_file_location("type_ahead", REPO / "examples/type_ahead.py")
    assert spec is not None
    assert spec.loader is not None
    type_ahead = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(type_ahead)
    text, shown = _type_ahead_block()
    # The settings `make serve` runs with: the default provider, the demo loaded.
    with TestClient(create_app(Settings(demo=True)), base_url="http://127.0.0.1") as client:
        printed = [f"{typed!r:24} {match}" for typed, match in type_ahead.type_out(client, text)]
    assert [_squeezed(line) for line in printed] == [_squeezed(line) for line in shown]
