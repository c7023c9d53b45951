"""`redstring load` with an embedding provider that refuses its requests: it stops at the
first refusal, without waiting or retrying, with one `error:` line naming the cause and
the settings to fix; one that refuses the text of some entities alone refuses those lines,
as bad lines are (skipped with `--skip-invalid`). Against a real HTTP server on a
loopback port."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from redstring import Direction, InMemoryGraphStore, InMemoryVectorStore, Redstring
from redstring.adapters.embeddings.openai_compatible import PROBE_TEXT
from redstring.api.cli import EXIT_FAILED, main
from redstring.api.settings import Settings
from redstring.composition.client import embeddings_from_settings
from redstring.domain.ids import entity_id_for, tenant_id_of
from tests.embeddings.fake_server import EmbeddingAPI, Failure, serving
from tests.ingest.support import chain_lines, company_names, entity_line

TENANT = "6f1c1f3e-2b0a-4d7e-9a57-1e2d3c4b5a69"
TENANT_ID = tenant_id_of(TENANT)
KEY_VARIABLE = "REDSTRING_TEST_LOAD_KEY"
KEY = "sk-test-load-0451"


@pytest.fixture
def api() -> EmbeddingAPI:
    return EmbeddingAPI(dimension=8)


@pytest.fixture
async def base_url(api: EmbeddingAPI, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[str]:
    """The fake server's URL, and the settings of a load that embeds with it."""
    async with serving(api) as url:
        for name, value in {
            "REDSTRING_EMBEDDINGS": "openai",
            "REDSTRING_EMBEDDING_BASE_URL": url,
            "REDSTRING_EMBEDDING_MODEL": "text-embedding-unknown",
            "REDSTRING_EMBEDDING_DIMENSION": "8",
            "REDSTRING_EMBEDDING_API_KEY_ENV": KEY_VARIABLE,
            "REDSTRING_EMBEDDING_BATCH_SIZE": "4",
            "REDSTRING_EMBEDDING_CONCURRENCY": "1",  # one request at a time: a retry shows
            KEY_VARIABLE: KEY,
        }.items():
            monkeypatch.setenv(name, value)
        yield url


async def _load(tmp_path: Path, lines: list[str], *options: str) -> tuple[int, float]:
    """`redstring load` of `lines` on a thread of its own (it runs its own event loop, and
    the fake server needs this one): its exit status and how long it took."""
    path = tmp_path / "data.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    started = time.perf_counter()
    argv = ["load", str(path), "--tenant", TENANT, *options]
    status = await asyncio.to_thread(main, argv)
    return status, time.perf_counter() - started


def _error_line(err: str) -> str:
    [line] = [line for line in err.splitlines() if line.startswith("error:")]
    return line


@pytest.mark.parametrize(
    ("status", "to_check", "requests"),
    [
        (401, "REDSTRING_EMBEDDING_API_KEY_ENV and the key in the variable it names", 1),
        (404, "REDSTRING_EMBEDDING_MODEL, or REDSTRING_EMBEDDING_BASE_URL", 1),
        # A status that may be about an input: the probe, refused too, says it is not.
        (400, "REDSTRING_EMBEDDING_MODEL, or REDSTRING_EMBEDDING_BASE_URL", 2),
        (413, "REDSTRING_EMBEDDING_BATCH_SIZE", 2),
    ],
)
async def test_a_refusal_stops_the_load_at_once_naming_the_settings_to_fix(
    api: EmbeddingAPI,
    base_url: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    status: int,
    to_check: str,
    requests: int,
) -> None:
    reply = f"no such model, or a wrong key: {KEY}"
    api.failures.extend(Failure(status, body={"error": {"message": reply}}) for _ in range(20))

    exit_status, seconds = await _load(tmp_path, list(chain_lines(12)))

    assert exit_status == EXIT_FAILED
    assert seconds < 10  # no outage waited out (the provider's retries back off for longer)
    assert api.requests == requests
    err = capsys.readouterr().err
    line = _error_line(err)
    assert line.startswith(
        f"error: the embedding provider at {base_url}/embeddings refused a request for model "
        f"'text-embedding-unknown' with HTTP {status}"
    )
    assert line.endswith(f'no such model, or a wrong key: [key]"}}}}; check {to_check}')
    assert KEY not in err
    # Refused at the first batch's embedding, before any write of it; run as it is, the
    # load would be refused again.
    assert err.endswith(
        f"{line}\nnothing is written; fix the settings the error says to check, then run "
        "the same load again\n"
    )


async def test_a_refusal_after_a_batch_is_written_says_what_is_and_what_to_fix(
    api: EmbeddingAPI, base_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The provider refuses every text from the second batch on, with a 400: the probe
    too, so its settings are at fault, not the entity's text."""
    api.refused_words = ("Zeta Works", PROBE_TEXT)
    zeta = entity_line("Zeta Works", description="A maker of widgets since 1948.")

    exit_status, _ = await _load(tmp_path, [*chain_lines(2), zeta], "--batch-size", "3")

    assert exit_status == EXIT_FAILED
    err = capsys.readouterr().err
    assert _error_line(err).endswith(
        "check REDSTRING_EMBEDDING_MODEL, or REDSTRING_EMBEDDING_BASE_URL"
    )
    assert err.endswith(
        "\nlines 1 to 3 are written (1 batch: 2 entities, 1 relationship); fix the settings "
        "the error says to check, then run the same load again to finish it (records "
        "already written are rewritten unchanged)\n"
    )


async def test_a_reply_that_is_not_embeddings_names_the_base_url(
    api: EmbeddingAPI, base_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    api.failures.append(Failure(200, body={"unexpected": True}))

    exit_status, _ = await _load(tmp_path, list(chain_lines(2)))

    assert exit_status == EXIT_FAILED
    assert _error_line(capsys.readouterr().err) == (
        f"error: the embedding provider at {base_url}/embeddings answered a request for model "
        "'text-embedding-unknown' with no usable embeddings: not an embeddings response (data: "
        'Field required): {"unexpected":true}; check REDSTRING_EMBEDDING_BASE_URL'
    )


async def test_an_outage_is_waited_out_past_a_request_s_deadline(
    api: EmbeddingAPI,
    base_url: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`load` keeps the provider's patient retries: a server gives its provider half its
    request deadline (here 0.25 s), a load the whole retry policy."""
    monkeypatch.setenv("REDSTRING_REQUEST_TIMEOUT", "0.5")
    api.failures.extend(Failure(503, {"Retry-After": "0.6"}) for _ in range(2))

    exit_status, seconds = await _load(tmp_path, list(chain_lines(2)))

    assert exit_status == 0, capsys.readouterr().err
    assert seconds >= 1.2
    assert api.requests == 3


# Entities whose text the provider refuses, and no other ---------------------------------

REFUSED_ANSWER = (
    'HTTP 413: {"error":{"message":"Input validation error: input 0 is not taken by this model"}}'
)


@pytest.fixture
def stores(
    base_url: str, monkeypatch: pytest.MonkeyPatch
) -> tuple[InMemoryGraphStore, InMemoryVectorStore]:
    """In-memory stores that every load of the test writes into, with the provider its
    settings name."""
    graph, vectors = InMemoryGraphStore(), InMemoryVectorStore(8)

    async def opened(settings: Settings) -> Redstring:
        embeddings = embeddings_from_settings(settings)
        closers = (embeddings.aclose,) if hasattr(embeddings, "aclose") else ()
        return Redstring(embeddings=embeddings, vectors=vectors, graph=graph, closers=closers)

    monkeypatch.setattr("redstring.api.command_line.open_client", opened)
    return graph, vectors


def _refusing_company(index: int, lines: list[str]) -> None:
    """Give company `index` of `chain_lines` (line `2 * index`, from 1; the first alone is
    line 1) a description the provider refuses."""
    number = 1 if index == 0 else 2 * index
    name, entity_type = company_names(index + 1)[index]
    lines[number - 1] = entity_line(name, entity_type, description="widgets REFUSED " * 40)


async def _written(
    stores: tuple[InMemoryGraphStore, InMemoryVectorStore], count: int
) -> tuple[list[str], int, int]:
    """The names of the companies of `chain_lines(count)` written, and how many vectors and
    relationships the tenant holds."""
    graph, vectors = stores
    tenant = TENANT_ID
    ids = [entity_id_for(tenant, t, name) for name, t in company_names(count)]
    entities = await graph.get_entities(ids, tenant)
    counts = await graph.relationship_counts(ids, tenant, direction=Direction.OUT)
    relationships = sum(counts.values())
    return sorted(e.name for e in entities), len(await vectors.sources(ids, tenant)), relationships


async def test_skip_invalid_skips_an_entity_whose_text_is_refused_and_its_relationships(
    api: EmbeddingAPI,
    stores: tuple[InMemoryGraphStore, InMemoryVectorStore],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Company 2 is line 4; lines 5 and 7 link it."""
    api.refused_words, api.refusal_status = ("REFUSED",), 413
    lines = list(chain_lines(4))
    _refusing_company(2, lines)

    exit_status, _ = await _load(tmp_path, lines, "--skip-invalid")

    err = capsys.readouterr().err
    assert exit_status == 0, err
    path = tmp_path / "data.jsonl"
    assert (
        f"{path}:4: skipped: the embedding provider refuses the text of this entity "
        f"({REFUSED_ANSWER})\n"
    ) in err
    name_2 = json.dumps(company_names(3)[2][0])
    assert f"{path}:5: skipped: target {name_2} (company) is on line 4, skipped as invalid" in err
    assert f"{path}:7: skipped: source {name_2} (company) is on line 4, skipped as invalid" in err
    assert "3 lines skipped" in err
    names = [name for name, _ in company_names(4)]
    assert await _written(stores, 4) == ([names[0], names[1], names[3]], 3, 1)
    # The batch of 4, the probe, its halves, and the half with company 2 halved: the
    # entities written then are not asked for again.
    sent = api.inputs_of()
    assert [len(inputs) for inputs in sent] == [4, 1, 2, 2, 1, 1]
    assert sent[1] == [PROBE_TEXT]


async def test_without_skip_invalid_a_refused_text_stops_the_load_at_its_batch(
    api: EmbeddingAPI,
    stores: tuple[InMemoryGraphStore, InMemoryVectorStore],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Batches of 3 lines: the first (companies 0 and 1) is written, the second (line 4,
    company 2) refused whole, and nothing after it."""
    api.refused_words, api.refusal_status = ("REFUSED",), 422
    lines = list(chain_lines(4))
    _refusing_company(2, lines)

    exit_status, _ = await _load(tmp_path, lines, "--batch-size", "3")

    assert exit_status == EXIT_FAILED
    err = capsys.readouterr().err
    path = tmp_path / "data.jsonl"
    answer = REFUSED_ANSWER.replace("413", "422")
    assert f"{path}:4: the embedding provider refuses the text of this entity ({answer})\n" in err
    assert "not loaded: 1 bad line; the batch from line 4 on was not written" in err
    assert not any(line.startswith("error:") for line in err.splitlines())
    names = [name for name, _ in company_names(2)]
    assert await _written(stores, 4) == (names, 2, 1)
