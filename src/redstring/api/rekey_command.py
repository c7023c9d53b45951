"""`redstring rekey --tenant ID`: a tenant's blocking keys derived again, in place.

For data written by an earlier version whose rules derived other keys
(CHANGELOG says when a version does). Progress goes to stderr; the summary
line too. Safe to run while the tenant is served and written to, and again
after a failure or an interrupt: it rewrites only what is still stale.
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Callable

from rich.console import Console
from rich.markup import escape
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from redstring.api.arguments import parse_uuid
from redstring.api.settings import Backend, Settings, for_long_command
from redstring.api.startup import open_client
from redstring.composition.rekey import DEFAULT_REKEY_PAGE_SIZE, RekeyReport
from redstring.domain.errors import InvalidInputError, RedstringError
from redstring.domain.ids import TenantId

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


def add_rekey_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    rekey = commands.add_parser(
        "rekey",
        help="rewrite a tenant's blocking keys stored by an earlier version (Neo4j backend)",
    )
    rekey.add_argument("--tenant", required=True, help="the tenant id (a UUID) to re-key")
    rekey.add_argument(
        "--page-size",
        type=int,
        default=DEFAULT_REKEY_PAGE_SIZE,
        help=f"entities read and rewritten at a time (default {DEFAULT_REKEY_PAGE_SIZE})",
    )
    rekey.add_argument(
        "--dry-run",
        action="store_true",
        help="count the entities whose keys are stale, rewrite none",
    )
    rekey.set_defaults(run=_rekey)


class _SettingsRefusedError(Exception):
    """The settings name services that cannot be built (an incomplete provider choice)."""


def _entities(number: int) -> str:
    return f"{number:,} {'entity' if number == 1 else 'entities'}"


def _summary(report: RekeyReport, *, dry_run: bool) -> str:
    read = f"read {_entities(report.read)}"
    if not report.stale:
        return f"{read}: every key is current, nothing to rewrite"
    if dry_run:
        return (
            f"{read}: {_entities(report.stale)} with keys of an earlier version; "
            "run without --dry-run to rewrite them"
        )
    summary = f"{read}: {_entities(report.stale)} with keys of an earlier version, "
    summary += f"{report.rewritten:,} rewritten"
    written_meanwhile = report.stale - report.rewritten
    if written_meanwhile:
        summary += f"; {written_meanwhile:,} written again meanwhile, keyed by their writer"
    return summary


def _rekey(args: argparse.Namespace) -> int:
    err = Console(stderr=True, soft_wrap=True)
    try:
        tenant = TenantId(parse_uuid(args.tenant, "--tenant"))
    except InvalidInputError as exc:
        err.print(f"[red]error:[/red] {escape(str(exc))}", highlight=False)
        return EXIT_USAGE
    if args.page_size < 1:
        err.print("[red]error:[/red] --page-size must be at least 1", highlight=False)
        return EXIT_USAGE
    settings = for_long_command(Settings())
    if settings.backend is Backend.MEMORY:
        err.print(
            "[red]error:[/red] the memory backend keeps no data between processes, so "
            "nothing of it has keys to rewrite; set REDSTRING_BACKEND=neo4j to re-key a "
            "server's tenant",
            highlight=False,
        )
        return EXIT_USAGE
    done = RekeyReport()

    def on_page(report: RekeyReport) -> None:
        nonlocal done
        done = report

    try:
        report = asyncio.run(_run(settings, tenant, args, err, on_page))
    except _SettingsRefusedError as exc:
        err.print(f"[red]bad settings:[/red] {escape(str(exc))}", highlight=False)
        return EXIT_USAGE
    except (RedstringError, OSError) as exc:
        err.print(f"[red]error:[/red] {escape(str(exc))}", highlight=False)
        err.print(_stopped(done), highlight=False)
        return EXIT_FAILED
    except KeyboardInterrupt:
        err.print("[red]interrupted[/red]", highlight=False)
        err.print(_stopped(done), highlight=False)
        return EXIT_INTERRUPTED
    err.print(_summary(report, dry_run=args.dry_run), highlight=False)
    return EXIT_OK


def _stopped(done: RekeyReport) -> str:
    if not done.read:
        return "stopped before reading an entity; nothing was rewritten"
    return (
        f"stopped after {_entities(done.read)} read and {done.rewritten:,} rewritten; "
        "what was rewritten stays, and running it again goes on from the stale ones left"
    )


async def _run(
    settings: Settings,
    tenant: TenantId,
    args: argparse.Namespace,
    err: Console,
    on_page: Callable[[RekeyReport], None],
) -> RekeyReport:
    try:
        client = await open_client(settings)
    except InvalidInputError as exc:
        raise _SettingsRefusedError(str(exc)) from exc
    try:
        with Progress(
            SpinnerColumn(),
            TextColumn("[bold]re-keying[/bold]" if not args.dry_run else "[bold]checking[/bold]"),
            TextColumn("{task.fields[read]:,} read"),
            TextColumn("{task.fields[stale]:,} stale"),
            TextColumn("{task.fields[rewritten]:,} rewritten"),
            TimeElapsedColumn(),
            console=err,
            transient=True,
        ) as progress:
            task = progress.add_task("rekey", total=None, read=0, stale=0, rewritten=0)

            def shown(report: RekeyReport) -> None:
                progress.update(
                    task, read=report.read, stale=report.stale, rewritten=report.rewritten
                )
                on_page(report)

            return await client.rekey(
                tenant, page_size=args.page_size, dry_run=args.dry_run, on_page=shown
            )
    finally:
        await client.aclose()
