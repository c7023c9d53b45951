"""`redstring load` and `rekey` stopped by a signal, in processes of their own: SIGTERM
(what `timeout`, docker, Kubernetes and systemd send) as Ctrl-C, with the summary and
status 143; Ctrl-C with status 130 however often, never an abort at exit; and an error
none of them expects said in one line, not a traceback."""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from redstring.api.cli import main
from redstring.api.command_line import EXIT_FAILED
from redstring.api.termination import EXIT_INTERRUPTED, EXIT_TERMINATED
from redstring.composition.client import Redstring
from tests.ingest.support import GraphStoreFailingAt, chain_lines, entity_line
from tests.processes import REPO, child_environment, unanswered_neo4j_environment

TENANT = "6f1c1f3e-2b0a-4d7e-9a57-1e2d3c4b5a69"


def _run(program: str, *, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    env = child_environment(REDSTRING_EMBEDDINGS="hashing")
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(program)],
        env=env,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_sigterm_stops_a_load_as_ctrl_c_does_with_its_summary(tmp_path: Path) -> None:
    """The load signals itself as its second batch's entities are written (the graph
    store of `GraphStoreFailingAt`): the batch before is written, and said. SIGTERM
    killed it at once (status -15), without a word."""
    path = tmp_path / "data.jsonl"
    path.write_text("\n".join(chain_lines(20)) + "\n")
    done = _run(f"""
        import os, signal, sys
        from redstring.api.entry_point import main
        from tests.ingest.support import GraphStoreFailingAt, services_over

        graph = GraphStoreFailingAt(fail_at=2)
        graph.failure = KeyboardInterrupt  # replaced: the signal is SIGTERM here
        upsert = GraphStoreFailingAt.upsert_entities

        async def upsert_entities(self, entities):
            self.entity_calls += 1
            if self.entity_calls == self.fail_at:
                os.kill(os.getpid(), signal.SIGTERM)
                import asyncio
                await asyncio.sleep(60)  # cancelled long before
            await super(GraphStoreFailingAt, self).upsert_entities(entities)

        GraphStoreFailingAt.upsert_entities = upsert_entities

        async def opened(settings):
            return services_over(graph=graph)

        import redstring.api.command_line
        redstring.api.command_line.open_client = opened
        sys.exit(main(["load", {str(path)!r}, "--tenant", {TENANT!r}, "--batch-size", "6"]))
    """)
    assert done.returncode == EXIT_TERMINATED, done.stderr
    assert "terminated (SIGTERM)" in done.stderr
    written = "lines 1 to 6 are written (1 batch: 4 entities, 2 relationships)"
    assert f"{written}; run the same load again to finish it" in done.stderr
    assert "Traceback" not in done.stderr


def test_an_ingest_cancelled_while_it_reads_leaves_no_reading_thread_behind() -> None:
    """The thread reading (and validating) the next batch is stopped and waited for: left
    validating lines in pydantic-core at exit, Python ended it there and the process
    aborted (`FATAL: exception not rethrown`), in about half the runs."""
    done = _run("""
        import asyncio, threading, uuid
        from redstring import HashingEmbeddingProvider
        from redstring.api.jsonl import numbered_records
        from redstring.composition.client import Redstring
        from redstring.composition.ingest import ingest
        from redstring.domain.ids import TenantId

        line = (
            b'{"kind":"relationship","relationship_type":"R","source":{"name":"A",'
            b'"type":"c"},"target":{"name":"B","type":"c"}}\\n'
        )

        async def main():
            services = Redstring.in_memory(HashingEmbeddingProvider(32))
            endless = numbered_records(iter(lambda: line, None), TenantId(uuid.uuid4()))
            task = asyncio.ensure_future(ingest(endless, services, batch_size=10**9))
            await asyncio.sleep(0.5)
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            print([t.name for t in threading.enumerate() if t.name == "redstring-ingest-read"])

        asyncio.run(main())
    """)
    assert (done.returncode, done.stdout) == (0, "[]\n"), done.stderr


def _feed(process: subprocess.Popen[bytes], stopped: threading.Event) -> None:
    """Entity lines to `process`'s standard input until it stops reading."""
    assert process.stdin is not None
    number = 0
    try:
        while not stopped.is_set():
            lines = (entity_line(f"Firm {number + i}") for i in range(200))
            process.stdin.write(("\n".join(lines) + "\n").encode())
            number += 200
    except (OSError, ValueError):  # the pipe broken, or closed by `communicate`
        pass


def _piped_load(stop: signal.Signals) -> tuple[int, str]:
    """`redstring load -` of endless lines from a pipe (a thread reads and validates
    them while batches are written), sent `stop` once it has loaded for a while."""
    env = child_environment(REDSTRING_EMBEDDINGS="hashing", REDSTRING_BACKEND="memory")
    argv = [sys.executable, "-m", "redstring.api", "load", "-", "--tenant", TENANT]
    process = subprocess.Popen(
        argv, env=env, cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )  # fmt: skip
    stopped = threading.Event()
    feeder = threading.Thread(target=_feed, args=(process, stopped), daemon=True)
    feeder.start()
    try:
        time.sleep(3)  # its imports (1 to 2 s), then batches
        process.send_signal(stop)
        _, err = process.communicate(timeout=60)
    finally:
        stopped.set()
        process.kill()
        feeder.join(5)
    return process.returncode, err.decode()


def test_ctrl_c_ends_a_load_reading_a_pipe_with_status_130_every_time() -> None:
    """The thread reading lines was left validating them in pydantic-core at exit, where
    Python ended it: some runs aborted (`FATAL: exception not rethrown`, status 134)."""
    for _ in range(3):
        status, err = _piped_load(signal.SIGINT)
        assert status == EXIT_INTERRUPTED, err
        assert "interrupted" in err
        assert "run the same load again to finish it" in err


def test_sigterm_ends_a_load_reading_a_pipe_with_status_143() -> None:
    status, err = _piped_load(signal.SIGTERM)
    assert status == EXIT_TERMINATED, err
    assert "terminated (SIGTERM)" in err
    assert "run the same load again to finish it" in err


def test_sigterm_stops_a_rekey_as_ctrl_c_does() -> None:
    """Signalled while it waits for a Neo4j that does not answer (the outage retry of a
    long command, 120 s)."""
    pytest.importorskip("neo4j")
    env = unanswered_neo4j_environment(REDSTRING_EMBEDDINGS="hashing")
    argv = [sys.executable, "-m", "redstring.api", "rekey", "--tenant", TENANT]
    process = subprocess.Popen(
        argv, env=env, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        time.sleep(3)
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=60)
    finally:
        process.kill()
    assert process.returncode == EXIT_TERMINATED, err
    said = err.splitlines()
    assert said[-2:] == [
        "terminated (SIGTERM)",
        "stopped before reading an entity; nothing was rewritten",
    ], said


@pytest.mark.parametrize("level", ["info", "debug"])
def test_an_error_a_load_does_not_expect_is_said_in_one_line_with_what_is_written(
    tmp_path: Path,
    shared: Redstring,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    level: str,
) -> None:
    """It ended the load in a traceback, without saying what was written; with
    `REDSTRING_LOG_LEVEL=debug` the traceback follows the line."""
    monkeypatch.setenv("REDSTRING_LOG_LEVEL", level)
    graph = shared.graph
    assert isinstance(graph, GraphStoreFailingAt)
    graph.failure = RuntimeError
    graph.fail_at = 2
    path = tmp_path / "data.jsonl"
    path.write_text("\n".join(chain_lines(20)) + "\n")
    assert main(["load", str(path), "--tenant", TENANT, "--batch-size", "6"]) == EXIT_FAILED
    err = capsys.readouterr().err
    error = next(line for line in err.splitlines() if line.startswith("error: "))
    hint = " (unexpected; REDSTRING_LOG_LEVEL=debug shows where)" if level == "info" else ""
    assert error == f"error: RuntimeError: the graph store went away{hint}"
    written = "lines 1 to 6 are written (1 batch: 4 entities, 2 relationships)"
    assert f"{written}; run the same load again to finish it" in err
    assert ("Traceback" in err) == (level == "debug")


def _signalled_while_idle(argv_input: str, stop: signal.Signals, tmp_path: Path) -> tuple[int, str]:
    """`redstring load argv_input` sent `stop` while it waits for a line that never comes:
    the writer (a pipe to its stdin for `-`, else the named FIFO `argv_input`) wrote one
    entity line and stays open, idle, until the process has ended or 30 s went by."""
    env = child_environment(REDSTRING_EMBEDDINGS="hashing", REDSTRING_BACKEND="memory")
    argv = [sys.executable, "-m", "redstring.api", "load", argv_input, "--tenant", TENANT]
    said = tmp_path / "stderr.txt"
    line = (entity_line("Firm A") + "\n").encode()
    with said.open("wb") as stderr:
        process = subprocess.Popen(
            argv, env=env, cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
            stderr=stderr,
        )  # fmt: skip
    assert process.stdin is not None
    writer: int | None = None
    try:
        if argv_input == "-":
            process.stdin.write(line)
            process.stdin.flush()
        else:
            deadline = time.monotonic() + 30
            while writer is None:  # until the load has opened the FIFO to read
                try:
                    writer = os.open(argv_input, os.O_WRONLY | os.O_NONBLOCK)
                except OSError as exc:
                    if exc.errno != errno.ENXIO or time.monotonic() > deadline:
                        raise
                    time.sleep(0.05)
            os.write(writer, line)
        time.sleep(3)  # its imports (1 to 2 s), then the wait for a second line
        process.send_signal(stop)
        status = process.wait(timeout=30)  # the writer still open
    finally:
        process.kill()
        process.stdin.close()
        if writer is not None:
            os.close(writer)
        process.wait(5)
    return status, said.read_text()


@pytest.mark.parametrize(
    ("stop", "status", "ended"),
    [
        (signal.SIGTERM, EXIT_TERMINATED, "terminated (SIGTERM)"),
        (signal.SIGINT, EXIT_INTERRUPTED, "interrupted"),
    ],
)
@pytest.mark.parametrize("source", ["stdin", "fifo"])
def test_a_load_stopped_while_its_input_is_open_and_idle_ends_with_its_status(
    tmp_path: Path, source: str, stop: signal.Signals, status: int, ended: str
) -> None:
    """The reading thread is blocked in a read of an input nobody writes to. From stdin,
    the interpreter's shutdown then waited for the lock of `sys.stdin.buffer` that read
    holds, and aborted the process (`Fatal Python error: _enter_buffered_busy`, status
    134); from a FIFO, closing the file waited for that read, as long as the writer kept
    the FIFO open. (`_piped_load`'s input never idles: its reads never wait.)"""
    if source == "stdin":
        argv_input = "-"
    else:
        argv_input = str(tmp_path / "input.jsonl")
        os.mkfifo(argv_input)
    got, err = _signalled_while_idle(argv_input, stop, tmp_path)
    assert got == status, err
    assert ended in err
    assert "nothing is written" in err
    assert "Fatal Python error" not in err
