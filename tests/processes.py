"""Child processes of the tests (servers, Node scripts): started, awaited with a deadline, logged, stopped.

Every wait is bounded; whatever a process printed is kept, so a failing test
can show it.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

import httpx

REPO = Path(__file__).resolve().parents[1]
E2E_DIR = REPO / "e2e"
START_TIMEOUT = 60.0
STOP_TIMEOUT = 10.0

T = TypeVar("T")


class ProcessFailedError(AssertionError):
    """A child process exited or stayed silent before it was ready."""


def free_loopback_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def child_environment(**extra: str) -> dict[str, str]:
    """This process's environment without `REDSTRING_*` settings, with `extra`, and
    with loopback exempt from any proxy (the tests talk to 127.0.0.1 only)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("REDSTRING_")}
    loopback = "127.0.0.1,localhost,::1"
    env["NO_PROXY"] = env["no_proxy"] = ",".join(filter(None, [env.get("NO_PROXY"), loopback]))
    env.update(extra)
    return env


def neo4j_child_environment(
    neo4j_auth: tuple[str, tuple[str, str]], *, uri: str | None = None, **extra: str
) -> dict[str, str]:
    """`child_environment` of a command over the suite's Neo4j (`neo4j_auth`, its URI or
    `uri` in its place), with `extra`."""
    own_uri, (user, password) = neo4j_auth
    return child_environment(
        REDSTRING_BACKEND="neo4j",
        REDSTRING_NEO4J_URI=uri or own_uri,
        REDSTRING_NEO4J_USER=user,
        REDSTRING_NEO4J_PASSWORD=password,
        **extra,
    )


def unanswered_neo4j_environment(**extra: str) -> dict[str, str]:
    """`child_environment` of a command over Neo4j at a loopback port where nothing
    listens (a socket's, bound and closed at once), with `extra`."""
    return child_environment(
        REDSTRING_BACKEND="neo4j",
        REDSTRING_NEO4J_URI=f"bolt://127.0.0.1:{free_loopback_port()}",
        REDSTRING_NEO4J_PASSWORD="unused",
        **extra,
    )


class LoggedProcess:
    """A child process whose combined stdout and stderr are read in the background."""

    def __init__(
        self,
        name: str,
        argv: Sequence[str],
        *,
        env: Mapping[str, str],
        cwd: Path | None = None,
    ) -> None:
        self.name = name
        self._lines: list[str] = []
        self._changed = threading.Condition()
        self._process = subprocess.Popen(
            list(argv),
            env=dict(env),
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            bufsize=1,
        )
        self._reader = threading.Thread(target=self._read, name=f"{name} output", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self._process.stdout is not None
        for line in self._process.stdout:
            with self._changed:
                self._lines.append(line)
                self._changed.notify_all()

    @property
    def output(self) -> str:
        with self._changed:
            return "".join(self._lines)

    def _fail(self, why: str) -> ProcessFailedError:
        return ProcessFailedError(f"{self.name} {why}; its output:\n{self.output}")

    def wait_for_json(self, key: str, timeout: float = START_TIMEOUT) -> dict[str, Any]:
        """The first line printed that is a JSON object with `key`, decoded."""

        def with_key(line: str) -> dict[str, Any] | None:
            try:
                parsed = json.loads(line)
            except ValueError:
                return None
            return parsed if isinstance(parsed, dict) and key in parsed else None

        return self._first(with_key, repr(key), timeout)

    def wait_for_line(self, pattern: str, timeout: float = START_TIMEOUT) -> str:
        """The first line printed that `pattern` (a regular expression) is found in."""
        found = re.compile(pattern)
        return self._first(lambda line: line if found.search(line) else None, pattern, timeout)

    def _first(self, read: Callable[[str], T | None], what: str, timeout: float) -> T:
        """What `read` makes of the first line printed it makes something of (not None)."""
        deadline = time.monotonic() + timeout
        seen = 0
        while True:
            with self._changed:
                lines = self._lines[seen:]
                seen += len(lines)
            for line in lines:
                made = read(line)
                if made is not None:
                    return made
            if self._process.poll() is not None and not self._reader.is_alive():
                raise self._fail(f"exited with status {self._process.returncode} before {what}")
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise self._fail(f"printed no {what} within {timeout:.0f} s")
            with self._changed:
                if seen == len(self._lines):
                    self._changed.wait(min(remaining, 0.2))

    def wait_until_answering(self, url: str, timeout: float = START_TIMEOUT) -> None:
        """Poll `url` until it answers 200."""
        deadline = time.monotonic() + timeout
        while True:
            if self._process.poll() is not None:
                raise self._fail(f"exited with status {self._process.returncode}")
            try:
                if httpx.get(url, timeout=1.0).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise self._fail(f"did not answer {url} within {timeout:.0f} s")
            time.sleep(0.1)

    def wait(self, timeout: float) -> int:
        """The exit status, once the process has ended by itself within `timeout` seconds."""
        try:
            status = self._process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            raise self._fail(f"did not finish within {timeout:.0f} s") from None
        self._reader.join(timeout=STOP_TIMEOUT)
        return status

    def send_signal(self, signal_number: int) -> None:
        """Send the process `signal_number` (SIGTERM, SIGINT), as a supervisor would."""
        self._process.send_signal(signal_number)

    def stop(self) -> None:
        """Terminate (then kill) the process, and wait for it and its output."""
        if self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(timeout=STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait(timeout=STOP_TIMEOUT)
        self._reader.join(timeout=STOP_TIMEOUT)


def redstring_server(
    port: int,
    *,
    demo: bool = True,
    environment: Mapping[str, str] | None = None,
    **settings: str,
) -> LoggedProcess:
    """`redstring serve [--demo]` on `127.0.0.1:port` with `REDSTRING_*` `settings`, and
    `environment`'s other variables."""
    env = child_environment(
        **(environment or {}), **{f"REDSTRING_{k.upper()}": v for k, v in settings.items()}
    )
    argv = [sys.executable, "-m", "redstring.api", "serve", "--port", str(port)]
    return LoggedProcess("redstring", [*argv, "--demo"] if demo else argv, env=env, cwd=REPO)


def node_script(name: str, script: str, *args: str, **env: str) -> LoggedProcess:
    """`node e2e/SCRIPT ARGS...` with `env` added to the environment."""
    return LoggedProcess(name, ["node", script, *args], env=child_environment(**env), cwd=E2E_DIR)
