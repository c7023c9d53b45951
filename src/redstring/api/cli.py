"""The `redstring` command line: `serve`, `load FILE.jsonl --tenant ID`, `schema`, `rekey`,
`keys`."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import errno
import gc
import importlib.metadata
import logging
import math
import os
import socket
import stat
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, BinaryIO

from pydantic import ValidationError
from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    Progress,
    ProgressColumn,
    Task,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Column
from rich.text import Text

from redstring.api.arguments import parse_uuid
from redstring.api.command_line import (
    EXIT_FAILED,
    EXIT_OK,
    EXIT_USAGE,
    SettingsRefusedError,
    counted,
    describe_settings_error,
    error_console,
    open_command_client,
    say_unexpected,
    settings_to_fix,
)
from redstring.api.errors import described
from redstring.api.key_commands import add_keys_command
from redstring.api.load import CountedLines, load_jsonl
from redstring.api.load_input import STDIN_PATH, open_input
from redstring.api.log_config import LogFormat, write_record
from redstring.api.rekey_command import add_rekey_command
from redstring.api.schema.build import schema_sdl
from redstring.api.settings import (
    Backend,
    Settings,
    for_long_command,
    log_format_asked,
    variable_of,
)
from redstring.api.startup import check_settings, with_misspellings
from redstring.api.termination import TerminatedAsInterrupted
from redstring.composition.client import Redstring
from redstring.composition.ingest import (
    DEFAULT_INGEST_BATCH_SIZE,
    IngestReport,
    InvalidLine,
    describe_relationship,
)
from redstring.domain.errors import InvalidInputError, RedstringError
from redstring.domain.ids import TenantId


def _settings(**overrides: Any) -> Settings:
    given = {name: value for name, value in overrides.items() if value is not None}
    return Settings(**given)


def _serve(args: argparse.Namespace) -> int:
    from redstring.api.server import serve  # uvicorn is only needed here

    try:
        settings = _settings(host=args.host, port=args.port, workers=args.workers, demo=args.demo)
    except ValidationError as exc:
        _refuse_to_serve(
            "bad settings", with_misspellings(describe_settings_error(exc)), log_format_asked()
        )
        return EXIT_USAGE
    try:
        check_settings(settings)
    except InvalidInputError as exc:
        # Refused here, in one line: in the app's start-up it would be a traceback.
        _refuse_to_serve("bad settings", with_misspellings(str(exc)), settings.log_format)
        return EXIT_USAGE
    refused = _cannot_listen(settings.host, settings.port)
    if refused is not None:
        # Said before the app starts: uvicorn binds only after the start-up (a demo
        # loaded, a Neo4j schema checked), then exits with status 3.
        hint = (
            " (another server there? choose another with --port or REDSTRING_PORT)"
            if refused.errno == errno.EADDRINUSE
            else ""
        )
        reason = (
            f"cannot listen on {settings.host} port {settings.port}: "
            f"{refused.strerror or refused}{hint}"
        )
        _refuse_to_serve("error", reason, settings.log_format)
        return EXIT_FAILED
    # A start that failed was said in the log, in its format, by the app.
    return EXIT_OK if serve(settings) else EXIT_FAILED


def _refuse_to_serve(label: str, reason: str, log_format: LogFormat) -> None:
    """`label: reason` on stderr, said before `serve` sets up logging: the label in red,
    or in `json` the message of an ERROR record of `redstring.api`, a JSON object as the
    server's log lines are."""
    if log_format == "json":
        write_record(
            logging.getLogger("redstring.api"), logging.ERROR, f"{label}: {reason}", "json"
        )
    else:
        error_console().print(f"[red]{label}:[/red] {escape(reason)}", highlight=False)


def _cannot_listen(host: str, port: int) -> OSError | None:
    """Why a server could not listen on `host`:`port` now, or None when it could: a
    socket bound there as uvicorn binds one (`SO_REUSEADDR`), and closed at once."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            return exc
    return None


def _schema(args: argparse.Namespace) -> int:
    settings = _settings(federation=args.federation)
    sys.stdout.write(schema_sdl(federation=settings.federation))
    return EXIT_OK


def package_version() -> str:
    """The installed distribution's version (its metadata, not a constant to keep in step)."""
    return importlib.metadata.version("redstring")


# Young-generation collection thresholds while loading, by where the data goes.
_LOAD_GC_THRESHOLD = {Backend.NEO4J: 10_000, Backend.MEMORY: 500_000}


@contextlib.contextmanager
def _rare_collections(backend: Backend) -> Iterator[None]:
    """Collect the young generation every 10,000 or 500,000 allocations instead of 700.

    A load allocates millions of short-lived objects and few cycles, so the
    default threshold spends much of a load in the collector; on the neo4j
    backend a much higher one lets each batch's cyclic garbage (driver and
    asyncio objects) pile up, while the memory backend keeps every record in
    the process and gains most from rare passes over them.
    """
    previous = gc.get_threshold()
    gc.set_threshold(_LOAD_GC_THRESHOLD[backend], *previous[1:])
    try:
        yield
    finally:
        gc.set_threshold(*previous)


# The progress bar is redrawn at most this often (rich's own default rate).
_REDRAW_SECONDS = 0.1


def _are(number: int) -> str:
    """The verb for `number` things: `is` for one, `are` for any other count."""
    return "is" if number == 1 else "are"


def _lines(report: IngestReport) -> str:
    """The lines of the batches a report counts as written: `line 1`, `lines 1 to 12`."""
    return "line 1" if report.last_line == 1 else f"lines 1 to {report.last_line:,}"


def _ending(report: IngestReport) -> str:
    """How a load that returned ended, for the progress bar's last redraw."""
    if report.stopped_at_line is not None:  # the first line of the batch, not the bad line
        return f"stopped at the batch from line {report.stopped_at_line:,}"
    if report.invalid:
        return f"done, {report.invalid:,} not loaded"
    return "done"


class _WrittenShareColumn(ProgressColumn):
    """The share of the file written, rounded down: ` 99%` while a byte of it is not
    written, and never `100%` before the load has ended having written all it could
    (the task's `whole` field), since the relationships that wait for the end of the
    file are written after the batch of its last line."""

    def render(self, task: Task) -> Text:
        whole = task.fields.get("whole", False)
        if task.total is None and not whole:  # read from a pipe: the share is unknown
            return Text("  ?%", style="progress.percentage")
        # rich's share of a total of 0 (an empty file) is 0%, even once all is written.
        share = 100 if whole and not task.total else math.floor(task.percentage)
        if not whole:
            share = min(share, 99)
        return Text(f"{share:>3}%", style="progress.percentage")


class _EndColumn(TimeRemainingColumn):
    """`ETA 0:00:12` while the load runs; how it ended (`done`, `stopped at the batch from
    line 11`, `failed`, `interrupted`) once it has, so the bar's last redraw never
    promises more.
    Not cached between redraws (rich caches an ETA for half a second): the end shows at once."""

    def __call__(self, task: Task) -> Text:
        return self.render(task)

    def render(self, task: Task) -> Text:
        ended: str = task.fields.get("ended", "")
        if ended:
            return Text(ended, style="bold")
        return Text.assemble("ETA ", super().render(task))


# How often a load whose stderr is no terminal prints a progress line, by default.
DEFAULT_PROGRESS_EVERY = 10.0


def _duration(seconds: float) -> str:
    """`0:03:05`: hours, minutes and seconds, as the bar writes its times."""
    whole = max(0, int(seconds))
    return f"{whole // 3600}:{whole % 3600 // 60:02}:{whole % 60:02}"


def progress_line(
    lines_read: int, report: IngestReport, elapsed: float, written: int, size: int | None
) -> str:
    """A load's progress in one line, for a stderr that is no terminal (a log file, a
    pipe), where the bar would be drawn only once, at the end: `lines_read`, what
    `report` counts written and at what rate since the start (`elapsed` seconds ago),
    and, when the input's `size` in bytes is known, the share of it `written` (rounded
    down, at most 99% until the end, as the bar's) and the time left at that rate."""
    rate = report.records / elapsed if elapsed > 0 else 0.0
    said = (
        f"progress: {counted(lines_read, 'line')} read; "
        f"{counted(report.entities, 'entity', 'entities')} and "
        f"{counted(report.relationships, 'relationship')} written ({rate:,.0f} records/s)"
    )
    if size is not None:
        share = min(math.floor(written * 100 / size), 99) if size else 0
        left = "?"
        if written > 0 and elapsed > 0:
            left = _duration((size - written) / (written / elapsed))
        said += f"; {share}% of the input written, ETA {left}"
    return f"{said}; {_duration(elapsed)} elapsed"


def _load(args: argparse.Namespace) -> int:
    err = error_console()
    try:
        tenant = TenantId(parse_uuid(args.tenant, "--tenant"))
    except InvalidInputError as exc:
        err.print(f"[red]error:[/red] {escape(str(exc))}", highlight=False)
        return EXIT_USAGE
    if args.batch_size < 1:
        err.print("[red]error:[/red] --batch-size must be at least 1", highlight=False)
        return EXIT_USAGE
    if not args.progress_every >= 0:  # NaN too
        err.print("[red]error:[/red] --progress-every must be 0 or more", highlight=False)
        return EXIT_USAGE
    settings = for_long_command(_settings())
    path: Path = args.file
    name = "<stdin>" if str(path) == STDIN_PATH else str(path)
    try:
        opened = open_input(path)
    except OSError as exc:
        err.print(f"[red]error:[/red] cannot read {escape(name)}: {exc}", highlight=False)
        return EXIT_FAILED
    run = _LoadRun(
        name, tenant, err, skip_invalid=args.skip_invalid, progress_every=args.progress_every
    )
    sigterm = TerminatedAsInterrupted()
    with opened as file, _rare_collections(settings.backend):
        try:
            report = asyncio.run(sigterm.run(run.load(file, settings, args.batch_size)))
        except SettingsRefusedError as exc:
            reason = with_misspellings(str(exc))
            err.print(f"[red]bad settings:[/red] {escape(reason)}", highlight=False)
            return EXIT_USAGE
        except (RedstringError, OSError) as exc:  # a store or provider down, a read error, ...
            err.print(f"[red]error:[/red] {escape(described(exc))}", highlight=False)
            run.print_interrupted(exc)
            return EXIT_FAILED
        except (KeyboardInterrupt, asyncio.CancelledError):  # Ctrl-C, SIGTERM
            err.print(f"[red]{sigterm.ended}[/red]", highlight=False)
            run.print_interrupted()
            return sigterm.status
        except Exception as exc:  # a bug, an error of a driver's not translated
            say_unexpected(err, exc, settings)
            run.print_interrupted(exc)
            return EXIT_FAILED
    return run.print_summary(report, settings)


class _LoadRun:
    """One `redstring load`: the progress bar (and progress lines away from a terminal),
    the lines reported, and the summary."""

    def __init__(
        self,
        path: str,
        tenant: TenantId,
        err: Console,
        *,
        skip_invalid: bool,
        progress_every: float = DEFAULT_PROGRESS_EVERY,
    ) -> None:
        self.path = path  # as the messages name the input: the file's path, or `<stdin>`
        self.tenant = tenant
        self.err = err
        self.skip_invalid = skip_invalid
        # The bar is drawn as it goes only on a terminal (rich draws its last state alone
        # elsewhere): anywhere else, a progress line every `progress_every` seconds.
        self.progress_every = (
            progress_every if not err.is_terminal or err.is_dumb_terminal else None
        )
        self.said = -math.inf  # `elapsed` when a progress line was last printed
        self.written = IngestReport()
        self.writing = False  # whether a batch has begun to write (`on_writing`)
        self.started = time.perf_counter()
        self.elapsed = 0.0
        self.redrawn = 0.0  # `elapsed` when the progress bar was last drawn

    async def load(self, file: BinaryIO, settings: Settings, batch_size: int) -> IngestReport:
        services = await open_command_client(settings)
        try:
            await self.check_vectors(services)
            lines = CountedLines.of_file(file)  # after the warning: it may wait for stdin
            with Progress(
                TextColumn("[bold]loading[/bold]"),
                BarColumn(),
                _WrittenShareColumn(),
                TextColumn("{task.fields[records]}"),
                TextColumn("{task.fields[rate]:,.0f}/s"),
                TimeElapsedColumn(),
                _EndColumn(table_column=Column(no_wrap=True)),  # the bar narrows instead
                console=self.err,
                # Redrawn from on_batch, not by rich's thread: that thread's ten redraws a
                # second contend for the GIL with the load.
                auto_refresh=False,
            ) as progress:
                read = os.fstat(file.fileno())
                # A pipe's size is unknown: the bar then shows no share nor ETA.
                size = read.st_size if stat.S_ISREG(read.st_mode) else None
                task = progress.add_task(
                    "load",
                    total=size,
                    records=counted(0, "record"),
                    rate=0.0,
                    ended="",
                    whole=False,
                )
                self.started = time.perf_counter()

                def on_batch(report: IngestReport) -> None:
                    self.written = dataclasses.replace(report)  # what whole batches wrote
                    self.elapsed = time.perf_counter() - self.started
                    rate = report.records / self.elapsed if self.elapsed > 0 else 0.0
                    due = self.elapsed - self.redrawn >= _REDRAW_SECONDS
                    if due:
                        self.redrawn = self.elapsed
                    # The lines of the batches written, not those read ahead of them.
                    written = lines.bytes_through(report.last_line)
                    progress.update(
                        task,
                        completed=written,
                        records=counted(report.records, "record"),
                        rate=rate,
                        refresh=due,
                    )
                    every = self.progress_every
                    if every is not None and self.elapsed - self.said >= every:
                        self.said = self.elapsed
                        said = progress_line(lines.lines_read, report, self.elapsed, written, size)
                        progress.console.print(said, markup=False, highlight=False)

                def on_invalid(line: InvalidLine) -> None:
                    verdict = "skipped: " if self.skip_invalid else ""
                    progress.console.print(
                        f"{self.path}:{line.line_number}: {verdict}{line.reason}",
                        markup=False,
                        highlight=False,
                    )

                def end(ended: str, report: IngestReport, *, whole: bool = False) -> None:
                    """The bar's last state: what was written, and how the load ended. A
                    stopped bar stays where the last written batch left it, below 100%."""
                    progress.update(
                        task,
                        completed=lines.bytes_read if whole else None,
                        records=counted(report.records, "record"),
                        ended=ended,
                        whole=whole,
                        refresh=True,
                    )
                    progress.stop_task(task)

                def on_writing() -> None:
                    self.writing = True

                try:
                    report = await load_jsonl(
                        lines,
                        self.tenant,
                        services,
                        batch_size=batch_size,
                        skip_invalid=self.skip_invalid,
                        on_invalid=on_invalid,
                        on_batch=on_batch,
                        on_writing=on_writing,
                    )
                except (asyncio.CancelledError, KeyboardInterrupt):
                    end("interrupted", self.written)
                    raise
                except BaseException:
                    end("failed", self.written)
                    raise
                end(_ending(report), report, whole=report.stopped_at_line is None)
                self.elapsed = time.perf_counter() - self.started
                return report
        finally:
            await services.aclose()

    async def check_vectors(self, services: Redstring) -> None:
        """Warn, before anything is written, when the stored vectors are not all of the
        configured provider (`Redstring.check_vector_provenance`, as `serve` checks once
        started): this load would add vectors of the configured provider beside them, in
        a store whose semantic channel then compares queries with vectors of two
        providers. A store that does not answer fails the load here, as its first batch
        would."""
        found = await services.check_vector_provenance()
        warning = found.warning()
        if warning is not None:
            self.err.print(
                f"[yellow]warning:[/yellow] {escape(warning)}. This load embeds its "
                f"entities with the configured provider ({escape(found.provider)}): stop "
                "it and load with the provider settings the stored vectors were made with, "
                "or let it finish and run that command after it",
                highlight=False,
            )

    def print_interrupted(self, error: BaseException | None = None) -> None:
        """What a load that failed (with `error`) or was interrupted has written, and how
        to finish it."""
        done = self.written
        again = "run the same load again"
        fix = settings_to_fix(error)
        if fix is not None:  # run as it is, it would be refused again
            again = f"fix {fix}, then {again}"
        if not self.writing:  # it failed at start, or checking or embedding the first batch
            said = "nothing is written" if fix is None else f"nothing is written; {again}"
            self.err.print(said, highlight=False)
            return
        if done.batches:
            # A deferred relationship's line is among the batches' lines, not written.
            but = f" but for their {counted(done.waiting, 'deferred relationship')}"
            written = (
                f"{_lines(done)} {_are(done.last_line)} written{but if done.waiting else ''} "
                f"({counted(done.batches, 'batch', 'batches')}: "
                f"{counted(done.entities, 'entity', 'entities')}, "
                f"{counted(done.relationships, 'relationship')})"
            )
        else:  # a batch is known to be written when it is reported: none was, one began
            written = "no batch is known to be written whole, though some records may be"
        self.err.print(
            f"{written}; {again} to finish it (records already written are rewritten unchanged)",
            highlight=False,
        )
        if done.waiting:
            self.err.print(
                f"{counted(done.waiting, 'deferred relationship')} from these batches "
                f"{_are(done.waiting)} not written (waiting for the end of the "
                "file):",
                highlight=False,
            )
            self.print_waiting(done, done.waiting)

    def print_waiting(self, report: IngestReport, count: int) -> None:
        """`FILE:LINE: relationship` for the first deferred relationships of the `count` not
        written, and how many more there are."""
        for number, named in report.first_waiting:
            self.err.print(
                f"{self.path}:{number}: {describe_relationship(named)}",
                markup=False,
                highlight=False,
            )
        if count > len(report.first_waiting):
            self.err.print(f"and {count - len(report.first_waiting):,} more", highlight=False)

    def print_summary(self, report: IngestReport, settings: Settings) -> int:
        err = self.err
        rate = report.records / self.elapsed if self.elapsed > 0 else 0.0
        err.print(
            f"loaded {counted(report.entities, 'entity', 'entities')} and "
            f"{counted(report.relationships, 'relationship')} "
            f"into tenant {self.tenant} ({settings.backend.value} backend) in "
            f"{self.elapsed:.1f} s ({rate:,.0f} records/s); "
            f"{counted(report.skipped, 'line')} skipped",
            highlight=False,
        )
        if report.vectors_kept:
            err.print(
                f"{counted(report.vectors_kept, 'entity', 'entities')} kept the vector "
                "stored before (the one their text embeds to), not embedded again",
                highlight=False,
            )
        if report.deferred:
            err.print(
                f"{counted(report.deferred, 'relationship line')} waited for the end of the file "
                "(an end of theirs was not written when their batch was)",
                highlight=False,
            )
        status = EXIT_OK
        if report.stopped_at_line is not None:
            before = (
                f"The batches before it ({_lines(report)}) are written: fix the file and run the "
                "same load again to finish"
                if report.batches
                else "Nothing is written: fix the file and run the same load again"
            )
            err.print(
                f"[red]not loaded:[/red] {counted(report.invalid, 'bad line')}; the batch from line "
                f"{report.stopped_at_line} on was not written, nothing of it, nor the rest of "
                f"the file. {before} (--skip-invalid loads around bad lines)",
                highlight=False,
            )
            if report.deferred_dropped:
                err.print(
                    f"{counted(report.deferred_dropped, 'deferred relationship')} from earlier "
                    f"batches {_are(report.deferred_dropped)} not written "
                    "either:",
                    highlight=False,
                )
                self.print_waiting(report, report.deferred_dropped)
            status = EXIT_FAILED
        elif report.invalid:
            err.print(
                f"[red]not loaded:[/red] {counted(report.invalid, 'relationship line')} "
                f"{'names' if report.invalid == 1 else 'name'} an entity "
                "found neither in the file nor in the tenant; everything else is written. "
                "An end named by name and type is the entity whose id they derive: one "
                "loaded with an id of its own is named by source_id or target_id",
                highlight=False,
            )
            status = EXIT_FAILED
        if settings.backend is Backend.MEMORY:
            err.print(
                "[yellow]note:[/yellow] the memory backend keeps data only while this process "
                "runs; set REDSTRING_BACKEND=neo4j to load into a server",
                highlight=False,
            )
        return status


def _falls_back(setting: str) -> str:
    """What an option left out takes, for its help: `(default: REDSTRING_PORT, else
    8000)`, the setting's variable, else the setting's default."""
    default = Settings.model_fields[setting].default
    shown = ("on" if default else "off") if isinstance(default, bool) else default
    return f"(default: {variable_of(setting)}, else {shown})"


class _Version(argparse.Action):
    """`--version`: the installed distribution's version, read from its metadata only when
    asked (every other command starts without reading it)."""

    def __call__(self, parser: argparse.ArgumentParser, *_: object, **__: object) -> None:
        print(f"{parser.prog} {package_version()}")  # to standard output, as argparse's own
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    """The argument parser; every option left out falls back to `REDSTRING_*` settings."""
    parser = argparse.ArgumentParser(
        prog="redstring", description="Hybrid entity retrieval over knowledge graphs."
    )
    parser.add_argument(
        "--version", action=_Version, nargs=0, help="show the installed version and exit"
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    serve = commands.add_parser("serve", help="serve the GraphQL API")
    serve.add_argument("--host", help=f"address to listen on {_falls_back('host')}")
    serve.add_argument("--port", type=int, help=f"port to listen on {_falls_back('port')}")
    serve.add_argument("--workers", type=int, help=f"worker processes {_falls_back('workers')}")
    serve.add_argument(
        "--demo",
        action=argparse.BooleanOptionalAction,
        default=None,
        help=f"load the demo dataset into the stores at start-up {_falls_back('demo')}",
    )
    serve.set_defaults(run=_serve)

    load = commands.add_parser("load", help="load a JSONL file of entities and relationships")
    load.add_argument(
        "file",
        type=Path,
        metavar="FILE.jsonl",
        help=f"the file to load, plain or gzip; {STDIN_PATH} reads stdin",
    )
    load.add_argument("--tenant", required=True, help="the tenant id (a UUID) to load into")
    load.add_argument(
        "--batch-size",
        type=int,
        default=DEFAULT_INGEST_BATCH_SIZE,
        help=f"lines per batch, checked, embedded and written together (default {DEFAULT_INGEST_BATCH_SIZE})",
    )
    load.add_argument(
        "--skip-invalid",
        action="store_true",
        help="report and skip bad lines instead of stopping before their batch",
    )
    load.add_argument(
        "--progress-every",
        type=float,
        default=DEFAULT_PROGRESS_EVERY,
        metavar="SECONDS",
        help="when stderr is not a terminal, print a progress line at the first batch written, "
        f"then at most every SECONDS (default {DEFAULT_PROGRESS_EVERY:g}); a terminal shows a bar",
    )
    load.set_defaults(run=_load)

    schema = commands.add_parser("schema", help="print the GraphQL schema (SDL)")
    schema.add_argument(
        "--federation",
        action=argparse.BooleanOptionalAction,
        default=None,
        help=f"print the Federation 2 subgraph schema {_falls_back('federation')}",
    )
    schema.set_defaults(run=_schema)

    add_rekey_command(commands)
    add_keys_command(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; the exit status is 0 on success, 1 on failure, 2 on bad usage
    (`load` and `rekey`: 130 once Ctrl-C stopped them, 143 once SIGTERM did)."""
    args = build_parser().parse_args(argv)
    try:
        result: int = args.run(args)
    except ValidationError as exc:
        reason = with_misspellings(describe_settings_error(exc))
        error_console().print(f"[red]bad settings:[/red] {escape(reason)}", highlight=False)
        return EXIT_USAGE
    return result
