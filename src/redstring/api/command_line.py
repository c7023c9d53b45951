"""What the `redstring` commands share: their exit statuses, the error for settings that
name services no one can build, the client they open, the console their messages go
to, an error none of them expects said in one line, and counts said in words."""

from __future__ import annotations

import traceback

from pydantic import ValidationError
from rich.console import Console
from rich.markup import escape

from redstring.api.errors import describe_validation_error, one_line
from redstring.api.settings import Settings, variable_of
from redstring.api.startup import open_client
from redstring.api.termination import EXIT_INTERRUPTED as EXIT_INTERRUPTED  # the commands'
from redstring.api.termination import EXIT_TERMINATED as EXIT_TERMINATED
from redstring.composition.client import Redstring
from redstring.domain.errors import EmbeddingRefusedError, InvalidInputError, StoreRefusedError

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


class SettingsRefusedError(Exception):
    """The settings name services that cannot be built (an incomplete provider choice):
    a command says so in one line and exits with `EXIT_USAGE`."""


async def open_command_client(settings: Settings) -> Redstring:
    """`open_client`, with settings it refuses raised as `SettingsRefusedError`."""
    try:
        return await open_client(settings)
    except InvalidInputError as exc:
        raise SettingsRefusedError(str(exc)) from exc


def error_console() -> Console:
    """Standard error for a command's messages: a message is one line however narrow the
    terminal or pipe (`FILE:LINE: reason`, `bad settings: ...`), never wrapped."""
    return Console(stderr=True, soft_wrap=True)


def say_unexpected(err: Console, error: Exception, settings: Settings) -> None:
    """`error: TYPE: message` on one line for an error a command does not expect (a bug,
    a driver's error redstring does not translate), where a traceback ended it; the
    traceback follows with `REDSTRING_LOG_LEVEL=debug`, else the line says so."""
    debug = settings.log_level == "debug"
    hint = "" if debug else f" (unexpected; {variable_of('log_level')}=debug shows where)"
    err.print(
        f"[red]error:[/red] {escape(type(error).__name__)}: {escape(one_line(error))}{hint}",
        highlight=False,
    )
    if debug:
        err.file.write("".join(traceback.format_exception(error)))
        err.file.flush()


def describe_settings_error(error: ValidationError) -> str:
    """Settings pydantic refused, each named by its field and its variable:
    `port (REDSTRING_PORT): Input should be a valid integer`."""
    names = {name: f"{name} ({variable_of(name)})" for name in Settings.model_fields}
    return describe_validation_error(error, names=names)


def counted(number: int, noun: str, plural: str | None = None) -> str:
    """`1 record`, `2 records`, `0 records`: a count with its noun in the right number."""
    return f"{number:,} {noun if number == 1 else plural or noun + 's'}"


def settings_to_fix(error: BaseException | None) -> str | None:
    """What a command stopped by `error` must have changed before it is run again: after
    an embedding provider's refusal (`EmbeddingRefusedError`), which refuses the same
    command again until they change, `the settings the error says to check` (`the
    embedding provider's settings` when it names none), and after Neo4j's
    (`StoreRefusedError`: credentials, a database), `the settings the error says to
    check`; None after any other error."""
    if isinstance(error, StoreRefusedError):
        return "the settings the error says to check"
    if not isinstance(error, EmbeddingRefusedError):
        return None
    if error.options:
        return "the settings the error says to check"
    return "the embedding provider's settings"
