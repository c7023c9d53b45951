"""The `redstring` command line: `serve`, `load FILE.jsonl --tenant ID`, `schema`."""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from redstring.api.arguments import parse_uuid
from redstring.api.errors import describe_validation_error
from redstring.api.load import LoadReport, ParsedFile, load_parsed, read_file
from redstring.api.schema.build import schema_sdl
from redstring.api.settings import Backend, Settings
from redstring.api.startup import open_services
from redstring.composition.build_graph import DEFAULT_BATCH_SIZE
from redstring.domain.errors import InvalidInputError, RedstringError
from redstring.domain.ids import TenantId

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def _settings(**overrides: Any) -> Settings:
    given = {name: value for name, value in overrides.items() if value is not None}
    return Settings(**given)


def _serve(args: argparse.Namespace) -> int:
    from redstring.api.server import serve  # uvicorn is only needed here

    serve(_settings(host=args.host, port=args.port, workers=args.workers, demo=args.demo))
    return EXIT_OK


def _schema(args: argparse.Namespace) -> int:
    sys.stdout.write(schema_sdl())
    return EXIT_OK


def _load(args: argparse.Namespace) -> int:
    err = Console(stderr=True)
    try:
        tenant = TenantId(parse_uuid(args.tenant, "--tenant"))
    except InvalidInputError as exc:
        err.print(f"[red]error:[/red] {escape(str(exc))}", highlight=False)
        return EXIT_USAGE
    if args.batch_size < 1:
        err.print("[red]error:[/red] --batch-size must be at least 1", highlight=False)
        return EXIT_USAGE
    path: Path = args.file
    try:
        parsed = read_file(path, tenant)
    except (OSError, UnicodeDecodeError) as exc:
        err.print(f"[red]error:[/red] cannot read {escape(str(path))}: {exc}", highlight=False)
        return EXIT_FAILED
    settings = _settings()
    try:
        report = asyncio.run(_write(parsed, settings, args.batch_size, err))
    except RedstringError as exc:  # a store or provider down, a dimension mismatch, ...
        err.print(f"[red]error:[/red] {escape(str(exc))}", highlight=False)
        return EXIT_FAILED
    for error in report.errors:
        err.print(f"{path}:{error.line_number}: {error.reason}", highlight=False, markup=False)
    if report.errors:
        err.print(f"[red]not loaded:[/red] {len(report.errors)} bad line(s)", highlight=False)
        return EXIT_FAILED
    err.print(
        f"loaded {report.entities} entities and {report.relationships} relationships "
        f"into tenant {tenant} ({settings.backend.value} backend)",
        highlight=False,
    )
    if settings.backend is Backend.MEMORY:
        err.print(
            "[yellow]note:[/yellow] the memory backend keeps data only while this process "
            "runs; set REDSTRING_BACKEND=neo4j to load into a server",
            highlight=False,
        )
    return EXIT_OK


async def _write(
    parsed: ParsedFile, settings: Settings, batch_size: int, err: Console
) -> LoadReport:
    if parsed.errors:
        return LoadReport(errors=parsed.errors)
    services = await open_services(settings)
    try:
        with Progress(
            TextColumn("[bold]loading[/bold]"),
            BarColumn(),
            MofNCompleteColumn(),
            TaskProgressColumn(),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=err,
            transient=False,
        ) as progress:
            task = progress.add_task("load", total=parsed.records)
            return await load_parsed(
                parsed,
                services,
                batch_size=batch_size,
                advance=lambda n: progress.advance(task, n),
            )
    finally:
        await services.aclose()


def build_parser() -> argparse.ArgumentParser:
    """The argument parser; every option left out falls back to `REDSTRING_*` settings."""
    parser = argparse.ArgumentParser(
        prog="redstring", description="Hybrid entity retrieval over knowledge graphs."
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    serve = commands.add_parser("serve", help="serve the GraphQL API")
    serve.add_argument("--host", help="address to listen on (default 127.0.0.1)")
    serve.add_argument("--port", type=int, help="port to listen on (default 8000)")
    serve.add_argument("--workers", type=int, help="worker processes (default 1)")
    serve.add_argument(
        "--demo",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="load the demo dataset into the stores at start-up",
    )
    serve.set_defaults(run=_serve)

    load = commands.add_parser("load", help="load a JSONL file of entities and relationships")
    load.add_argument("file", type=Path, metavar="FILE.jsonl")
    load.add_argument("--tenant", required=True, help="the tenant id (a UUID) to load into")
    load.add_argument(
        "--batch-size",
        type=int,
        default=DEFAULT_BATCH_SIZE,
        help=f"records per write (default {DEFAULT_BATCH_SIZE})",
    )
    load.set_defaults(run=_load)

    schema = commands.add_parser("schema", help="print the GraphQL schema (SDL)")
    schema.set_defaults(run=_schema)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; the exit status is 0 on success, 1 on failure, 2 on bad usage."""
    args = build_parser().parse_args(argv)
    try:
        result: int = args.run(args)
    except ValidationError as exc:
        Console(stderr=True).print(
            f"[red]bad settings:[/red] {escape(describe_validation_error(exc))}", highlight=False
        )
        return EXIT_USAGE
    return result
