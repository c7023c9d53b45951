"""`redstring load` away from a terminal (progress lines), and gzip input."""

from __future__ import annotations

import asyncio
import gzip
import io
import os
import queue
import subprocess
import sys
import threading
import uuid
from pathlib import Path

import pytest

from redstring import TenantId
from redstring.api.cli import main, progress_line
from redstring.api.load import CountedLines
from redstring.composition.client import Redstring
from redstring.composition.ingest import IngestReport
from tests.ingest.support import chain_lines, company_names, entity_line, ids_of, snapshot
from tests.processes import REPO, child_environment

TENANT = TenantId(uuid.UUID("6f1c1f3e-2b0a-4d7e-9a57-1e2d3c4b5a69"))


def write(path: Path, lines: list[str]) -> Path:
    data = ("\n".join(lines) + "\n").encode()
    path.write_bytes(gzip.compress(data) if path.suffix == ".gz" else data)
    return path


def load(path: Path, *options: str) -> int:
    return main(["load", str(path), "--tenant", str(TENANT), *options])


def progress_lines(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("progress: ")]


# Progress lines ------------------------------------------------------------------------


def test_a_progress_line_is_printed_while_the_load_runs_when_stderr_is_no_terminal() -> None:
    """Through a pipe, as `2> load.log` would be: the line comes while the input is still
    open, not with the summary at the end (rich draws its bar there once, at the end)."""
    env = child_environment(REDSTRING_BACKEND="memory", REDSTRING_EMBEDDINGS="hashing")
    argv = [sys.executable, "-m", "redstring.api", "load", "-", "--tenant", str(TENANT)]
    argv += ["--batch-size", "1", "--progress-every", "0"]
    child = subprocess.Popen(
        argv,
        env=env,
        cwd=REPO,
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert child.stdin is not None
    assert child.stderr is not None
    said: queue.Queue[str] = queue.Queue()
    reader = threading.Thread(target=lambda: [said.put(line) for line in child.stderr or ()])
    reader.start()
    try:
        # Batches overlap by one stage: the first is reported once the next is read.
        child.stdin.write("".join(f"{line}\n" for line in chain_lines(3)))
        child.stdin.flush()
        seen: list[str] = []
        while not any(line.startswith("progress: ") for line in seen):
            seen.append(said.get(timeout=30))  # raises Empty when no line comes
        [first] = progress_lines("".join(seen))
        assert first.startswith("progress: ")
        assert " lines read; " in first
        assert " written (" in first
        assert " records/s); " in first
        assert "%" not in first  # a pipe's size is unknown: no share, no ETA
        assert first.endswith(" elapsed")
        assert child.poll() is None  # still reading its input
    finally:
        child.stdin.close()
        status = child.wait(timeout=60)
        reader.join(timeout=10)
    rest = []
    while not said.empty():
        rest.append(said.get())
    err = "".join(seen + rest)
    assert status == 0, err
    assert "loaded 3 entities and 2 relationships" in err
    assert progress_lines(err)[-1].startswith("progress: 5 lines read; 3 entities and 2 rel")


def test_progress_lines_give_the_share_written_and_an_eta_for_a_file(
    tmp_path: Path, shared: Redstring, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path / "data.jsonl", list(chain_lines(4)))  # 7 lines
    assert load(path, "--batch-size", "2", "--progress-every", "0") == 0
    lines = progress_lines(capsys.readouterr().err)
    assert len(lines) == 4  # one a batch
    assert lines[0].startswith("progress: ")
    assert "% of the input written, ETA " in lines[0]
    assert lines[-1].startswith("progress: 7 lines read; 4 entities and 3 relationships written")
    assert "; 99% of the input written, ETA " in lines[-1]  # 100% once done: the bar's end


def test_with_the_default_interval_a_short_load_prints_one_progress_line(
    tmp_path: Path, shared: Redstring, capsys: pytest.CaptureFixture[str]
) -> None:
    """The first batch written is said at once; the next lines wait out the interval."""
    assert load(write(tmp_path / "data.jsonl", list(chain_lines(10))), "--batch-size", "2") == 0
    assert len(progress_lines(capsys.readouterr().err)) == 1


def test_a_terminal_shows_the_bar_alone(
    tmp_path: Path,
    shared: Redstring,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TTY_COMPATIBLE", "1")  # rich takes the captured stderr for a terminal
    monkeypatch.setenv("TERM", "xterm")
    path = write(tmp_path / "data.jsonl", list(chain_lines(4)))
    assert load(path, "--batch-size", "2", "--progress-every", "0") == 0
    err = capsys.readouterr().err
    assert "progress: " not in err  # (its lines start with control codes there)
    assert "loaded 4 entities and 3 relationships" in err


def test_a_progress_line_says_the_share_and_the_time_left_at_the_rate_so_far() -> None:
    report = IngestReport(entities=3, relationships=1)
    line = progress_line(1_234, report, elapsed=10.0, written=250, size=1_000)
    assert line == (
        "progress: 1,234 lines read; 3 entities and 1 relationship written (0 records/s); "
        "25% of the input written, ETA 0:00:30; 0:00:10 elapsed"
    )
    nothing = progress_line(0, IngestReport(), elapsed=0.0, written=0, size=1_000)
    assert nothing.endswith("; 0% of the input written, ETA ?; 0:00:00 elapsed")
    piped = progress_line(5, report, elapsed=3_725.0, written=250, size=None)
    assert piped.endswith(" records/s); 1:02:05 elapsed")


def test_a_negative_interval_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path / "data.jsonl", [entity_line("Acme Corp")])
    assert load(path, "--progress-every", "-1") == 2
    assert "error: --progress-every must be 0 or more" in capsys.readouterr().err


# gzip ------------------------------------------------------------------------------------


def test_a_gzip_file_is_read_as_the_lines_it_holds(
    tmp_path: Path, shared: Redstring, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path / "data.jsonl.gz", list(chain_lines(30)))
    assert load(path, "--batch-size", "7", "--progress-every", "0") == 0
    err = capsys.readouterr().err
    assert "not valid UTF-8" not in err
    assert "loaded 30 entities and 29 relationships into tenant" in err
    assert " 100% " in err
    assert "% of the input written" in progress_lines(err)[0]
    loaded = asyncio.run(snapshot(shared, TENANT, ids_of(TENANT, company_names(30))))
    assert (len(loaded.entities), len(loaded.relationships)) == (30, 29)


def test_gzip_on_standard_input_is_read_too(
    shared: Redstring, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    read, write_end = os.pipe()
    with os.fdopen(write_end, "wb") as pipe:
        pipe.write(gzip.compress(("\n".join(chain_lines(3)) + "\n").encode()))
    with os.fdopen(read, "rb") as piped:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(piped))
        assert load(Path("-")) == 0
    assert "loaded 3 entities and 2 relationships into tenant" in capsys.readouterr().err


def test_gzip_lines_are_counted_by_the_compressed_bytes_read(tmp_path: Path) -> None:
    plain = ("\n".join(chain_lines(2_000)) + "\n").encode()
    path = tmp_path / "data.jsonl.gz"
    path.write_bytes(gzip.compress(plain))
    with path.open("rb") as file:
        lines = CountedLines.of_file(file)
        read = list(lines)
        assert b"".join(read) == plain
        assert lines.lines_read == len(read) == 3_999
        assert lines.bytes_read == path.stat().st_size  # not the text's size
        middle = lines.bytes_through(2_000)
        assert 0 < middle < path.stat().st_size


def test_a_gzip_file_cut_short_fails_the_load_in_one_line(
    tmp_path: Path, shared: Redstring, capsys: pytest.CaptureFixture[str]
) -> None:
    whole = gzip.compress(("\n".join(chain_lines(30)) + "\n").encode())
    path = tmp_path / "cut.jsonl.gz"
    path.write_bytes(whole[: len(whole) - 20])
    assert load(path, "--batch-size", "7") == 1
    err = capsys.readouterr().err
    assert "error: the gzip input ends before its end marker" in err
    assert "Traceback" not in err
