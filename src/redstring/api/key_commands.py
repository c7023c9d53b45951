"""`redstring keys add|list|revoke`: the command line over the API key file (`api_keys.py`).

`keys add` writes only the new key to stdout, so a script can capture it; it is
shown this once and never stored. Everything else goes to stderr. The file is
`--file`, else `REDSTRING_API_KEYS_FILE`.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import sys
from collections.abc import Iterator
from pathlib import Path

from rich.markup import escape

from redstring.api.api_keys import add_key, list_keys, revoke_key
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
    with _warnings_kept() as logged:
        issued = add_key(path, tenants, Role(args.role), name)
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
    with _warnings_kept() as logged:
        record = revoke_key(path, args.key_id)
    error_console().print(
        f"key {record.id} revoked: a running server refuses it from its next request",
        highlight=False,
    )
    _say_warnings(logged)
    return EXIT_OK


def run_keys_command(args: argparse.Namespace) -> int:
    """Run `keys add|list|revoke`; 2 for bad usage (no file setting, one in a folder that
    does not exist, a tenant that is not a UUID, a name that is not printable, an unknown
    key id), 1 when the file cannot be read or written."""
    try:
        status: int = args.keys_run(args)
    except _UsageError as exc:
        error_console().print(f"[red]error:[/red] {escape(str(exc))}", highlight=False)
        return EXIT_USAGE
    except InvalidInputError as exc:  # an unknown key id, a file that is not a key file
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
    actions = keys.add_subparsers(dest="keys_command", required=True, metavar="ACTION")

    add = actions.add_parser("add", parents=[file], help="issue a key; prints it once, on stdout")
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

    revoke = actions.add_parser("revoke", parents=[file], help="revoke a key by its id")
    revoke.add_argument("key_id", metavar="KEY_ID")
    revoke.set_defaults(keys_run=_revoke)

    keys.set_defaults(run=run_keys_command)
