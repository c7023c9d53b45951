"""`redstring keys add|list|revoke`: the command line over the API key file (`api_keys.py`).

`keys add` writes only the new key to stdout, so a script can capture it; it is
shown this once and never stored. Everything else goes to stderr. The file is
`--file`, else `REDSTRING_API_KEYS_FILE`. `keys add` and `keys revoke` wait for the
file's lock held by another process up to `--wait` seconds, saying so when they start.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import math
import os
import sys
from collections.abc import Iterator
from pathlib import Path

from rich.markup import escape

from redstring.api.api_keys import (
    DEFAULT_LOCK_TIMEOUT,
    KeyFileBusyError,
    KeyFileError,
    add_key,
    list_keys,
    revoke_key,
)
from redstring.api.arguments import tenant_id_arg
from redstring.api.authorization import Role
from redstring.api.command_line import EXIT_FAILED, EXIT_OK, EXIT_USAGE, error_console
from redstring.domain.errors import InvalidInputError

KEYS_FILE_ENV = "REDSTRING_API_KEYS_FILE"


class _UsageError(Exception):
    """The command line cannot be run as given (exit status 2)."""


def _key_file(args: argparse.Namespace) -> Path:
    given = args.file or os.environ.get(KEYS_FILE_ENV)
    if not given:
        raise _UsageError(f"name the key file with --file or {KEYS_FILE_ENV}")
    path = Path(given)
    if not path.parent.is_dir():
        raise _UsageError(f"the key file's folder does not exist: {path.parent}")
    return path


def _lock_timeout(args: argparse.Namespace) -> float:
    """`--wait`: seconds from 0 up (`inf` waits without limit)."""
    if args.wait is None:
        return DEFAULT_LOCK_TIMEOUT
    try:
        seconds = float(args.wait)
    except ValueError:
        seconds = math.nan
    if not seconds >= 0:
        raise _UsageError(f"--wait must be a number of seconds from 0 up, got {args.wait!r}")
    return seconds


def _say_waiting(line: str) -> None:
    """Say at once that the command waits for the file's lock (`add_key`'s `on_wait`)."""
    error_console().print(escape(line), highlight=False)


class _Collected(logging.Handler):
    """Keeps the records it is given."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@contextlib.contextmanager
def _warnings_kept() -> Iterator[list[logging.LogRecord]]:
    """The WARNING (and worse) records of logger `redstring.api` while it lasts (a key file
    that could not keep its owner or group, `api_keys`), for the command to say after its
    own lines: a handler of its own, so Python's last-resort handler does not print
    them first."""
    handler = _Collected()
    logger = logging.getLogger("redstring.api")
    logger.addHandler(handler)
    try:
        yield handler.records
    finally:
        logger.removeHandler(handler)


def _say_warnings(records: list[logging.LogRecord]) -> None:
    for record in records:
        error_console().print(
            f"[yellow]warning:[/yellow] {escape(record.getMessage())}", highlight=False
        )


def _add(args: argparse.Namespace) -> int:
    path = _key_file(args)
    try:
        tenants = [tenant_id_arg(value, "--tenant") for value in args.tenant]
    except InvalidInputError as exc:
        raise _UsageError(str(exc)) from None
    name = args.name or ""
    if not name.isprintable():  # `keys list` writes one line of tab-separated fields a key
        raise _UsageError("--name must be printable (no tab, newline or other control character)")
    timeout = _lock_timeout(args)
    with _warnings_kept() as logged:
        issued = add_key(
            path, tenants, Role(args.role), name, timeout=timeout, on_wait=_say_waiting
        )
    sys.stdout.write(issued.key + "\n")
    sys.stdout.flush()
    record = issued.record
    error_console().print(
        f"key {record.id} added to {escape(str(path))} ({record.role.value} on "
        f"{len(record.tenants)} tenant(s)); the key above is shown only this once",
        highlight=False,
    )
    _say_warnings(logged)
    return EXIT_OK


def _list(args: argparse.Namespace) -> int:
    path = _key_file(args)
    records = list_keys(path)
    if not records:
        error_console().print(f"no keys in {escape(str(path))}", highlight=False)
    for record in records:
        tenants = ",".join(str(t) for t in record.tenants)
        created = record.created.isoformat().replace("+00:00", "Z")
        sys.stdout.write(
            f"{record.id}\t{record.name or '-'}\t{record.role.value}\t{tenants}\t{created}\n"
        )
    return EXIT_OK


def _revoke(args: argparse.Namespace) -> int:
    path = _key_file(args)
    timeout = _lock_timeout(args)
    with _warnings_kept() as logged:
        record = revoke_key(path, args.key_id, timeout=timeout, on_wait=_say_waiting)
    error_console().print(
        f"key {record.id} revoked: a running server refuses it from its next request",
        highlight=False,
    )
    _say_warnings(logged)
    return EXIT_OK


def run_keys_command(args: argparse.Namespace) -> int:
    """Run `keys add|list|revoke`; 2 for bad usage (no file setting, one in a folder that
    does not exist, a tenant that is not a UUID, a name that is not printable, a `--wait`
    that is not a number from 0 up, an unknown key id), 1 when the file cannot be read or
    written (`KeyFileError`: it does not exist, for `list` and `revoke`; this user may
    not read it, it is not a regular file or not a key file; its lock held by another
    process beyond `--wait` or refused)."""
    try:
        status: int = args.keys_run(args)
    except KeyFileBusyError as exc:
        error_console().print(
            f"[red]error:[/red] {escape(str(exc))} (--wait SECONDS waits longer)",
            highlight=False,
        )
        return EXIT_FAILED
    except _UsageError as exc:
        error_console().print(f"[red]error:[/red] {escape(str(exc))}", highlight=False)
        return EXIT_USAGE
    except KeyFileError as exc:  # the file is at fault, not the command line
        error_console().print(f"[red]error:[/red] {escape(str(exc))}", highlight=False)
        return EXIT_FAILED
    except InvalidInputError as exc:  # an unknown key id
        error_console().print(f"[red]error:[/red] {escape(str(exc))}", highlight=False)
        return EXIT_USAGE
    except OSError as exc:
        error_console().print(f"[red]error:[/red] {escape(str(exc))}", highlight=False)
        return EXIT_FAILED
    return status


def add_keys_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `keys` and its subcommands to the `redstring` parser's `commands`."""
    keys = commands.add_parser("keys", help="issue, list and revoke API keys")
    file = argparse.ArgumentParser(add_help=False)
    file.add_argument("--file", help=f"the API key file (default: {KEYS_FILE_ENV})", metavar="PATH")
    lock = argparse.ArgumentParser(add_help=False)
    lock.add_argument(
        "--wait",
        metavar="SECONDS",
        help="how long to wait for the key file's lock while another process holds it, "
        f"then give up and change nothing (default {DEFAULT_LOCK_TIMEOUT:g}; inf: no limit)",
    )
    actions = keys.add_subparsers(dest="keys_command", required=True, metavar="ACTION")

    add = actions.add_parser(
        "add", parents=[file, lock], help="issue a key; prints it once, on stdout"
    )
    add.add_argument(
        "--tenant", action="append", required=True, help="a tenant id (UUID); repeat for several"
    )
    add.add_argument("--role", required=True, choices=[r.value for r in Role])
    add.add_argument("--name", help="a label shown by `keys list` (who holds the key)")
    add.set_defaults(keys_run=_add)

    listing = actions.add_parser(
        "list", parents=[file], help="list keys: id, name, role, tenants, created"
    )
    listing.set_defaults(keys_run=_list)

    revoke = actions.add_parser("revoke", parents=[file, lock], help="revoke a key by its id")
    revoke.add_argument("key_id", metavar="KEY_ID")
    revoke.set_defaults(keys_run=_revoke)

    keys.set_defaults(run=run_keys_command)
