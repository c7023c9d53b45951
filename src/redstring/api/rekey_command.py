"""`redstring rekey --tenant ID | --all-tenants [--vectors]`: keys (and vectors) derived again.

For data written by an earlier version whose rules derived other keys, or
with `--vectors` embedded other text (CHANGELOG says when a version does), or
vectors of another model of the same dimension. Progress goes to stderr; the
summary line too. Safe to run while the tenant is served and written to, and
again after a failure or an interrupt: it rewrites only the keys still stale,
and embeds only the vectors not current.
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Iterable

from rich.console import Console
from rich.markup import escape
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from redstring.api.arguments import parse_uuid
from redstring.api.command_line import (
    EXIT_FAILED,
    EXIT_OK,
    EXIT_USAGE,
    SettingsRefusedError,
    counted,
    error_console,
    open_command_client,
    say_unexpected,
    settings_to_fix,
)
from redstring.api.errors import described
from redstring.api.settings import Backend, Settings, for_long_command
from redstring.api.startup import with_misspellings
from redstring.api.termination import TerminatedAsInterrupted
from redstring.composition.client import Redstring
from redstring.composition.rekey import (
    DEFAULT_EMBED_PAGE_SIZE,
    DEFAULT_REKEY_PAGE_SIZE,
    RekeyReport,
)
from redstring.domain.errors import InvalidInputError, RedstringError
from redstring.domain.ids import TenantId


def add_rekey_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    rekey = commands.add_parser(
        "rekey",
        help="rewrite blocking keys (with --vectors, vectors) stored by an earlier version "
        "(Neo4j backend)",
    )
    which = rekey.add_mutually_exclusive_group(required=True)
    which.add_argument("--tenant", help="the tenant id (a UUID) to re-key")
    which.add_argument(
        "--all-tenants", action="store_true", help="every tenant with an entity, one by one"
    )
    rekey.add_argument(
        "--vectors",
        action="store_true",
        help="also embed again, with the configured provider, the entities whose stored "
        "vector is of another text or model, or missing (but for text that embeds to no "
        "direction, which has none)",
    )
    rekey.add_argument(
        "--page-size",
        type=int,
        help=f"entities read and rewritten at a time (default {DEFAULT_REKEY_PAGE_SIZE}, "
        f"with --vectors {DEFAULT_EMBED_PAGE_SIZE})",
    )
    rekey.add_argument(
        "--dry-run",
        action="store_true",
        help="count the entities whose keys (or vectors) are stale; rewrite none, and embed "
        "none but those without a vector",
    )
    rekey.set_defaults(run=_rekey)


def _entities(number: int) -> str:
    return counted(number, "entity", "entities")


def _summary(report: RekeyReport, *, dry_run: bool, vectors: bool) -> str:
    return _keys_summary(report, dry_run=dry_run) + (
        _vectors_summary(report, dry_run=dry_run) if vectors else ""
    )


def _keys_summary(report: RekeyReport, *, dry_run: bool) -> str:
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


def _vectors_summary(report: RekeyReport, *, dry_run: bool) -> str:
    if not report.stale_vectors:
        return "; every vector is current"
    stale = f"; {_entities(report.stale_vectors)} with a vector of another text or model"
    if dry_run:
        return f"{stale}, or none: run without --dry-run to embed them again"
    summary = f"{stale}, or none: {report.embedded:,} embedded again"
    if report.directionless:
        deleted = "vector" if report.directionless == 1 else "vectors"
        summary += f", {report.directionless:,} of them to no direction ({deleted} deleted)"
    if report.unsettled:
        summary += (
            f", {report.unsettled:,} of them written by another writer throughout: "
            "run again when it is done"
        )
    return summary


def _sum(reports: Iterable[RekeyReport]) -> RekeyReport:
    listed = list(reports)
    return RekeyReport(
        read=sum(r.read for r in listed),
        stale=sum(r.stale for r in listed),
        rewritten=sum(r.rewritten for r in listed),
        stale_vectors=sum(r.stale_vectors for r in listed),
        embedded=sum(r.embedded for r in listed),
        unsettled=sum(r.unsettled for r in listed),
        directionless=sum(r.directionless for r in listed),
    )


def _rekey(args: argparse.Namespace) -> int:
    err = error_console()
    try:
        tenant = None if args.all_tenants else TenantId(parse_uuid(args.tenant, "--tenant"))
    except InvalidInputError as exc:
        err.print(f"[red]error:[/red] {escape(str(exc))}", highlight=False)
        return EXIT_USAGE
    if args.page_size is not None and args.page_size < 1:
        err.print("[red]error:[/red] --page-size must be at least 1", highlight=False)
        return EXIT_USAGE
    settings = for_long_command(Settings())
    if settings.backend is Backend.MEMORY:
        err.print(
            "[red]error:[/red] the memory backend keeps no data between processes, so "
            "nothing of it has keys to rewrite; set REDSTRING_BACKEND=neo4j to re-key a "
            "server's tenants",
            highlight=False,
        )
        return EXIT_USAGE
    run = _RekeyRun(args, err)
    sigterm = TerminatedAsInterrupted()
    try:
        asyncio.run(sigterm.run(run.rekey(settings, tenant)))
    except SettingsRefusedError as exc:
        reason = with_misspellings(str(exc))
        err.print(f"[red]bad settings:[/red] {escape(reason)}", highlight=False)
        return EXIT_USAGE
    except (RedstringError, OSError) as exc:
        err.print(f"[red]error:[/red] {escape(described(exc))}", highlight=False)
        err.print(run.stopped(exc), highlight=False)
        return EXIT_FAILED
    except (KeyboardInterrupt, asyncio.CancelledError):  # Ctrl-C, SIGTERM
        err.print(f"[red]{sigterm.ended}[/red]", highlight=False)
        err.print(run.stopped(), highlight=False)
        return sigterm.status
    except Exception as exc:  # a bug, an error of a driver's not translated
        say_unexpected(err, exc, settings)
        err.print(run.stopped(exc), highlight=False)
        return EXIT_FAILED
    return EXIT_OK


class _RekeyRun:
    """One `redstring rekey`: the tenants done, the one under way, and what they say."""

    def __init__(self, args: argparse.Namespace, err: Console) -> None:
        self.args = args
        self.err = err
        self.done: list[RekeyReport] = []
        self.current = RekeyReport()  # the tenant under way's, to its last step done

    def stopped(self, error: BaseException | None = None) -> str:
        """How far a run that failed (with `error`) or was interrupted got: the entities
        read, of the page under way too, and those rewritten and embedded again, by the
        steps done (`on_progress`)."""
        so_far = _sum([*self.done, self.current])
        if not so_far.read:
            return "stopped before reading an entity; nothing was rewritten"
        embedded = f", {so_far.embedded:,} embedded again" if self.args.vectors else ""
        fix = settings_to_fix(error)
        once = "" if fix is None else f"once {fix} are fixed, "
        return (
            f"stopped after {_entities(so_far.read)} read and {so_far.rewritten:,} "
            f"rewritten{embedded}; what was rewritten stays, and {once}running it again "
            "goes on from the stale ones left"
        )

    async def rekey(self, settings: Settings, tenant: TenantId | None) -> None:
        client = await open_command_client(settings)
        try:
            tenants = [tenant] if tenant is not None else await client.tenants()
            for each in tenants:
                report = await self._rekey_one(client, each)
                self.done.append(report)
                self.current = RekeyReport()
                named = "" if tenant is not None else f"tenant {each}: "
                said = _summary(report, dry_run=self.args.dry_run, vectors=self.args.vectors)
                self.err.print(named + said, highlight=False)
            if tenant is None:
                total = _summary(
                    _sum(self.done), dry_run=self.args.dry_run, vectors=self.args.vectors
                )
                self.err.print(f"{len(tenants):,} tenant(s), in all: {total}", highlight=False)
        finally:
            await client.aclose()

    async def _rekey_one(self, client: Redstring, tenant: TenantId) -> RekeyReport:
        verb = "checking" if self.args.dry_run else "re-keying"
        # Counts as `done/stale`, and the tenant by its first eight characters (the
        # summary names it whole), so that the line fits 80 columns.
        counts = (
            "{task.fields[read]:,} read · keys {task.fields[rewritten]:,}/{task.fields[stale]:,}"
        )
        if self.args.vectors:
            counts += " · vectors {task.fields[embedded]:,}/{task.fields[stale_vectors]:,}"
        with Progress(
            SpinnerColumn(),
            TextColumn(f"[bold]{verb}[/bold] {str(tenant)[:8]}"),
            TextColumn(counts),
            TimeElapsedColumn(),
            console=self.err,
            transient=True,
        ) as progress:
            task = progress.add_task(
                "rekey", total=None, read=0, stale=0, rewritten=0, stale_vectors=0, embedded=0
            )

            def shown(report: RekeyReport) -> None:
                self.current = report
                progress.update(
                    task,
                    read=report.read,
                    stale=report.stale,
                    rewritten=report.rewritten,
                    stale_vectors=report.stale_vectors,
                    embedded=report.embedded,
                )

            return await client.rekey(
                tenant,
                page_size=self.args.page_size,
                dry_run=self.args.dry_run,
                vectors=self.args.vectors,
                on_progress=shown,  # a page's steps, not only its end: `stopped` says them
            )
