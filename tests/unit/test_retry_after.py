"""`seconds_to_wait`: the `Retry-After` of a 503 from the longest wait its outages named."""

from __future__ import annotations

import math

import pytest

from redstring.api.retry_after import seconds_to_wait


@pytest.mark.parametrize(
    ("named", "seconds"),
    [
        (None, 5),
        (math.nan, 5),
        (0.0, 1),
        (-3.0, 1),
        (0.001, 1),
        (1.0, 1),
        (17.0, 17),
        (17.2, 18),
        (60.0, 60),
        (60.5, 60),
        (86_400.0, 60),
        (math.inf, 60),
    ],
)
def test_seconds_to_wait(named: float | None, seconds: int) -> None:
    assert seconds_to_wait(named) == seconds
