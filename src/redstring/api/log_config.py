"""`configure_logging`: where a server process sends its logs, and in which format.

`text` is one line per record, `LEVEL logger: message`, followed by the
request's fields as `key=value`; `json` makes every record of the process,
uvicorn's included, one JSON object per line (python-json-logger), with a
traceback as a single `exc_info` string. Either way a record logged while a
request is served carries that request's `request_id`.
"""

from __future__ import annotations

import json
import logging
import sys
from typing import Literal

from pythonjsonlogger.core import RESERVED_ATTRS
from pythonjsonlogger.json import JsonFormatter

from redstring.api.request_record import current_request_id

LogFormat = Literal["text", "json"]

# The fields the access log adds to its record, in the order `text` prints them.
REQUEST_FIELDS = (
    "request_id",
    "method",
    "path",
    "status",
    "duration_ms",
    "operation",
    "tenant",
    "caller",
    "outcome",
    "error_codes",
)
TEXT_FORMAT = "%(levelname)s %(name)s: %(message)s"
TRACEBACK_START = "Traceback (most recent call last):"
# uvicorn adds a copy of its message with terminal colours to its records.
_DROPPED = ("color_message",)
# The HTTP client's loggers: a line per request at INFO (`HTTP Request: POST <url>`) and
# its connection's steps at DEBUG, beside the one access line a request of this server
# has; the URL may be a provider's. Only their warnings and above are written.
QUIET_LOGGERS = ("httpx", "httpcore")


class RequestIdFilter(logging.Filter):
    """Sets `request_id` on each record logged while a request is served."""

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, "request_id", None) is None:
            request_id = current_request_id()
            if request_id is not None:
                record.request_id = request_id
        return True


class TracebackMessageFilter(logging.Filter):
    """Moves a traceback logged as the message (uvicorn logs a failed start-up so) to
    the record's exception text, leaving its last line, the exception, as the
    message: in `json` a traceback is then always the `exc_info` field."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.msg
        if (
            record.exc_info is None
            and not record.args
            and isinstance(message, str)
            and message.startswith(TRACEBACK_START)
        ):
            record.exc_text = message.rstrip()
            record.msg = record.exc_text.splitlines()[-1]
        return True


class TextFormatter(logging.Formatter):
    """`LEVEL logger: message key=value ...` for the request fields a record has; a value
    with a space, quote or `=` in it is quoted as JSON, and a character of the message
    that is not printable (a line break, a lone surrogate) escaped, so one record stays
    one line: a message may hold what a client sent (an `operationName`), and must not
    write a line of its own. A traceback follows on lines of its own, as it is."""

    def __init__(self) -> None:
        super().__init__(TEXT_FORMAT)

    def formatMessage(self, record: logging.LogRecord) -> str:  # noqa: N802 (logging's name)
        message = record.message
        if message.isprintable():
            return super().formatMessage(record)
        record.message = "".join(c if c.isprintable() else _escape(c) for c in message)
        try:
            return super().formatMessage(record)
        finally:
            record.message = message

    def format(self, record: logging.LogRecord) -> str:
        line = super().format(record)
        fields = [
            f"{name}={_text_value(getattr(record, name))}"
            for name in REQUEST_FIELDS
            if getattr(record, name, None) is not None
        ]
        return " ".join([line, *fields]) if fields else line


def _escape(character: str) -> str:
    """A character as Python would write it in a string literal (`\\n`, `\\x1b`, `\\ud800`)."""
    return character.encode("unicode_escape", "backslashreplace").decode("ascii")


def _text_value(value: object) -> str:
    if isinstance(value, list):
        value = ",".join(map(str, value)) or "-"
    text = str(value)
    if not text or any(c.isspace() or c in "\"'=" for c in text):
        return json.dumps(text)
    return text


def json_formatter() -> JsonFormatter:
    """One JSON object per record: `timestamp` (UTC, ISO 8601), `level`, `logger`,
    `message`, any extra fields (`request_id` and the access fields), `exc_info`."""
    return JsonFormatter(
        "{levelname}{name}{message}",
        style="{",
        rename_fields={"levelname": "level", "name": "logger"},
        reserved_attrs=[*RESERVED_ATTRS, *_DROPPED],
        timestamp=True,
    )


def log_handler(log_format: LogFormat) -> logging.Handler:
    """A handler writing to stderr in `log_format`, with the request id and traceback
    filters."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(json_formatter() if log_format == "json" else TextFormatter())
    handler.addFilter(RequestIdFilter())
    handler.addFilter(TracebackMessageFilter())
    return handler


def write_record(logger: logging.Logger, level: int, message: str, log_format: LogFormat) -> None:
    """`message` as one record of `logger` at `level`, written to stderr in `log_format`
    whatever logging's configuration: for what a process says before it configures
    logging (`serve`'s refusal to start)."""
    handler = log_handler(log_format)
    try:
        handler.handle(logger.makeRecord(logger.name, level, "", 0, message, (), None))
    finally:
        handler.close()


def configure_logging(level: str, log_format: LogFormat = "text") -> None:
    """Send log records at `level` and above to stderr in `log_format`, once per process.

    Called by the processes redstring starts itself (the `serve` command and
    each uvicorn worker); an app embedded elsewhere keeps its host's logging. The
    HTTP client's loggers (`QUIET_LOGGERS`) write warnings and above only, whatever
    `level`: at INFO they write a line per request to the embedding provider.
    """
    logging.basicConfig(level=level.upper(), handlers=[log_handler(log_format)])
    quiet = max(logging.WARNING, logging.getLevelNamesMapping()[level.upper()])
    for name in QUIET_LOGGERS:
        logging.getLogger(name).setLevel(quiet)
