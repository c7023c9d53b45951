"""`FallbackEpisode`: the log of a read path while another answers in its place."""

from __future__ import annotations

import logging


class FallbackEpisode:
    """One read path (a vector index, the joint candidate statement) that another
    answers for while it fails, and the log of its episodes of failure.

    An episode starts at the first failure, a WARNING that says what failed and
    what answers instead; the failures after it are DEBUG lines; the first answer
    of the path after them ends it with one INFO line that counts them. So an
    operator sees when an episode began and ended, not a line per request.
    Not locked: it lives on one store, whose calls share one event loop.
    """

    def __init__(self, logger: logging.Logger, path: str, instead: str) -> None:
        self._logger = logger
        self.path = path
        self.instead = instead
        self.failures = 0

    def failed(self, message: str, *args: object) -> None:
        """Log one failure of the path: `message % args` as a WARNING when it starts an
        episode, else at DEBUG."""
        self.failures += 1
        level = logging.WARNING if self.failures == 1 else logging.DEBUG
        self._logger.log(level, message, *args)

    def answered(self) -> None:
        """Note that the path answered; the end of an episode, if one was running."""
        if self.failures:
            self._logger.info(
                "%s answers again, after %d failure(s) answered by %s",
                self.path,
                self.failures,
                self.instead,
            )
            self.failures = 0
