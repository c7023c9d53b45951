"""What the `redstring` commands share: their exit statuses, the error for settings that
name services no one can build, and counts said in words."""

from __future__ import annotations

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


class SettingsRefusedError(Exception):
    """The settings name services that cannot be built (an incomplete provider choice):
    a command says so in one line and exits with `EXIT_USAGE`."""


def counted(number: int, noun: str, plural: str | None = None) -> str:
    """`1 record`, `2 records`, `0 records`: a count with its noun in the right number."""
    return f"{number:,} {noun if number == 1 else plural or noun + 's'}"
