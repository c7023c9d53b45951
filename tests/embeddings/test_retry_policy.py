"""`RetryPolicy` and `retry_after_seconds`: the waits between attempts."""

from __future__ import annotations

import pytest

from redstring.adapters.embeddings.openai_compatible import RetryPolicy, retry_after_seconds


def test_backoff_is_full_jitter_under_a_doubling_ceiling() -> None:
    policy = RetryPolicy(base_delay=1.0, max_delay=5.0)
    for failed, ceiling in [(1, 1.0), (2, 2.0), (3, 4.0), (4, 5.0), (10, 5.0)]:
        draws = [policy.delay(failed, None) for _ in range(200)]
        assert all(0.0 <= d <= ceiling for d in draws)
        assert max(draws) > ceiling / 2  # spread over the range, not pinned to a bound
        assert len(set(draws)) > 100  # jittered, so clients that failed together spread out


def test_retry_after_wins_over_backoff_up_to_its_cap() -> None:
    policy = RetryPolicy(base_delay=100.0, max_retry_after=30.0)
    assert policy.delay(1, 2.0) == 2.0
    assert policy.delay(1, 0.0) == 0.0
    assert policy.delay(3, 3600.0) == 30.0


@pytest.mark.parametrize(
    ("header", "seconds"),
    [
        ("2", 2.0),
        (" 1.5 ", 1.5),
        ("0", 0.0),
        (None, None),
        ("", None),
        ("-1", None),
        ("nan", None),
        ("inf", None),
        ("Wed, 21 Oct 2015 07:28:00 GMT", None),
    ],
)
def test_retry_after_seconds(header: str | None, seconds: float | None) -> None:
    assert retry_after_seconds(header) == seconds


@pytest.mark.parametrize(
    "options", [{"max_attempts": 0}, {"base_delay": -1.0}, {"max_retry_after": -0.5}]
)
def test_nonsense_policies_are_refused(options: dict[str, float]) -> None:
    with pytest.raises(ValueError):  # noqa: PT011 (InvalidInputError is a ValueError)
        RetryPolicy(**options)  # type: ignore[arg-type]


@pytest.mark.parametrize("seconds", [0.0, -1.0, float("nan")])
def test_a_time_for_a_call_is_positive_or_none(seconds: float) -> None:
    with pytest.raises(ValueError, match="max_elapsed must be positive"):
        RetryPolicy(max_elapsed=seconds)
    assert RetryPolicy().max_elapsed is None  # the default waits out an outage
