"""`redstring load` with an embedding provider that refuses its requests: it stops at the
first refusal, without waiting or retrying, with one `error:` line naming the cause and
the settings to fix. Against a real HTTP server on a loopback port."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from redstring.api.cli import EXIT_FAILED, main
from tests.embeddings.fake_server import EmbeddingAPI, Failure, serving
from tests.ingest.support import chain_lines, entity_line

TENANT = "6f1c1f3e-2b0a-4d7e-9a57-1e2d3c4b5a69"
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
    ("status", "to_check"),
    [
        (401, "REDSTRING_EMBEDDING_API_KEY_ENV and the key in the variable it names"),
        (404, "REDSTRING_EMBEDDING_MODEL, or REDSTRING_EMBEDDING_BASE_URL"),
    ],
)
async def test_a_refusal_stops_the_load_at_once_naming_the_settings_to_fix(
    api: EmbeddingAPI,
    base_url: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    status: int,
    to_check: str,
) -> None:
    reply = f"no such model, or a wrong key: {KEY}"
    api.failures.extend(Failure(status, body={"error": {"message": reply}}) for _ in range(20))

    exit_status, seconds = await _load(tmp_path, list(chain_lines(12)))

    assert exit_status == EXIT_FAILED
    assert seconds < 10  # no outage waited out (the provider's retries back off for longer)
    assert api.requests == 1
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
    """The second batch holds a text longer than the model reads: refused with a 400."""
    api.max_input_tokens = 200
    long = entity_line("Zeta Works", description="A maker of widgets since 1948. " * 10)

    exit_status, _ = await _load(tmp_path, [*chain_lines(2), long], "--batch-size", "3")

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
