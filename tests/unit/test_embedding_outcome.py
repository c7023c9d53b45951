"""`redstring_embedding_last_outcome`: each provider call's outcome, told by what it raised;
a call cut short leaves the gauge as it was."""

from __future__ import annotations

import asyncio

import pytest

from redstring import EmbeddingRefusedError, EmbeddingUnavailableError, StoreUnavailableError
from redstring.api.metrics import EmbeddingOutcome, Metrics, embedding_outcome
from redstring.domain.errors import TextsRefusedError

GAUGE = "redstring_embedding_last_outcome"


def _gauge(metrics: Metrics) -> dict[str, float | None]:
    return {
        outcome.value: metrics.registry.get_sample_value(GAUGE, {"outcome": outcome.value})
        for outcome in EmbeddingOutcome
    }


@pytest.mark.parametrize(
    ("error", "outcome"),
    [
        (None, EmbeddingOutcome.OK),
        (EmbeddingRefusedError("HTTP 401", status_code=401), EmbeddingOutcome.REFUSED),
        # It answered: some texts were at fault, not the provider.
        (TextsRefusedError({0: "HTTP 413: too long"}), EmbeddingOutcome.OK),
        (EmbeddingUnavailableError("HTTP 503", attempts=3), EmbeddingOutcome.UNAVAILABLE),
        (StoreUnavailableError("down"), EmbeddingOutcome.UNAVAILABLE),
        (ValueError("not a vector"), EmbeddingOutcome.FAILED),
        (asyncio.CancelledError(), None),
        (KeyboardInterrupt(), None),
    ],
)
def test_the_outcome_of_a_call_is_told_by_what_it_raised(
    error: BaseException | None, outcome: EmbeddingOutcome | None
) -> None:
    assert embedding_outcome(error) is outcome


def test_the_gauge_holds_the_last_outcome_alone_and_a_cancellation_leaves_it() -> None:
    metrics = Metrics()
    assert _gauge(metrics) == dict.fromkeys(EmbeddingOutcome, 0.0)  # no call yet

    metrics.embedding("query", 1, 0.01, error=EmbeddingRefusedError("no", status_code=403))
    assert _gauge(metrics) == {"ok": 0.0, "refused": 1.0, "unavailable": 0.0, "failed": 0.0}
    metrics.embedding("documents", 3, 0.01, error=asyncio.CancelledError())
    assert _gauge(metrics)["refused"] == 1.0
    metrics.embedding("documents", 3, 0.01, error=None)
    assert _gauge(metrics) == {"ok": 1.0, "refused": 0.0, "unavailable": 0.0, "failed": 0.0}
    metrics.embedding("query", 1, 0.01, error=ValueError("no vector"))
    assert _gauge(metrics) == {"ok": 0.0, "refused": 0.0, "unavailable": 0.0, "failed": 1.0}
    # Every call that raised is still counted, the cancelled one included.
    errors = metrics.registry.get_sample_value
    assert errors("redstring_embedding_errors_total", {"kind": "query"}) == 2
    assert errors("redstring_embedding_errors_total", {"kind": "documents"}) == 1
