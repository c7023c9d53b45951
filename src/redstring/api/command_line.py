"""What the `redstring` commands share: their exit statuses, the error for settings that
name services no one can build, the client they open, and counts said in words."""

from __future__ import annotations

from redstring.api.settings import Settings
from redstring.api.startup import open_client
from redstring.composition.client import Redstring
from redstring.domain.errors import InvalidInputError

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


class SettingsRefusedError(Exception):
    """The settings name services that cannot be built (an incomplete provider choice):
    a command says so in one line and exits with `EXIT_USAGE`."""


async def open_command_client(settings: Settings) -> Redstring:
    """`open_client`, with settings it refuses raised as `SettingsRefusedError`."""
    try:
        return await open_client(settings)
    except InvalidInputError as exc:
        raise SettingsRefusedError(str(exc)) from exc


def counted(number: int, noun: str, plural: str | None = None) -> str:
    """`1 record`, `2 records`, `0 records`: a count with its noun in the right number."""
    return f"{number:,} {noun if number == 1 else plural or noun + 's'}"
