"""`FallbackEpisode`: one warning an episode of failures, debug lines within it, one info
line at its end; checked without a server (the Neo4j paths that use it are proven in
tests/integration/test_neo4j_index_fallbacks.py)."""

from __future__ import annotations

import logging

import pytest

from redstring.adapters.neo4j.fallback_episode import FallbackEpisode

LOGGER = "redstring.tests.fallback_episode"


def _episode() -> FallbackEpisode:
    return FallbackEpisode(logging.getLogger(LOGGER), "the path", "the other path")


def test_an_episode_is_one_warning_then_debug_lines_then_one_info_line(
    caplog: pytest.LogCaptureFixture,
) -> None:
    episode = _episode()
    with caplog.at_level(logging.DEBUG, logger=LOGGER):
        episode.answered()  # no episode yet: nothing to end
        for attempt in range(3):
            episode.failed("failure %d", attempt)
        episode.answered()
        episode.answered()  # ended already
        episode.failed("failure %d", 3)
    assert [(r.levelno, r.getMessage()) for r in caplog.records] == [
        (logging.WARNING, "failure 0"),
        (logging.DEBUG, "failure 1"),
        (logging.DEBUG, "failure 2"),
        (logging.INFO, "the path answers again, after 3 failure(s) answered by the other path"),
        (logging.WARNING, "failure 3"),
    ]
    assert episode.failures == 1


def test_at_the_warning_level_an_episode_logs_its_start_alone(
    caplog: pytest.LogCaptureFixture,
) -> None:
    episode = _episode()
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        for _ in range(100):
            episode.failed("failure")
        episode.answered()
    assert [r.levelno for r in caplog.records] == [logging.WARNING]
