#!/usr/bin/env python3
"""Fetch, start and stop a throwaway Neo4j Community server for development and tests.

Usage::

    python3 scripts/neo4j_server.py start    # fetch (first run only), start, wait for Bolt
    python3 scripts/neo4j_server.py status   # exit 0 if the server answers Bolt, else 1
    python3 scripts/neo4j_server.py stop     # stop it and delete its data

    python3 scripts/neo4j_server.py --name fault start        # a second server, its own state
    python3 scripts/neo4j_server.py --name fault stop --keep  # stop it, keep data/port/password
    python3 scripts/neo4j_server.py --name fault start        # resume it: same port, password, data

    python3 scripts/neo4j_server.py --name dev start --persistent  # survives stops and crashes

``start`` writes the connection settings to ``.cache/neo4j/env`` as ``KEY=value``
lines, ready for ``set -a; . .cache/neo4j/env; set +a`` or a Makefile ``include``:
``NEO4J_URI``, ``NEO4J_USER``, ``NEO4J_PASSWORD`` (for the tests and Neo4j's own
tools) and the same as ``REDSTRING_NEO4J_URI``, ``_USER``, ``_PASSWORD`` with
``REDSTRING_BACKEND=neo4j`` (for ``redstring serve`` and ``redstring load``).

Instances: without ``--name`` the script manages the checkout's default server, its
state directly in ``.cache/neo4j/``. ``--name NAME`` manages another server whose
state (env file, ``server.json``, run folders, lock) lives in ``.cache/neo4j/NAME/``;
every instance runs from the one fetched distribution. ``NEO4J_URI`` in the
environment only ever stands in for the default instance: a named one is always
a server of this script's own.

How it works:

* The server's jars (``org.neo4j:neo4j`` at ``NEO4J_VERSION`` and its runtime
  dependencies) are copied by ``mvn dependency:copy-dependencies`` (driven by
  ``scripts/neo4j/pom.xml``) into ``.cache/neo4j/dist-<version>/lib``.  Later runs
  reuse that folder and do not call Maven.  The standalone tarball is not
  published for 2026.x releases, so the server is started through Neo4j's own
  entry point, ``org.neo4j.server.Neo4jCommunity``: the real server, speaking Bolt.
* Neo4j 2025.x and later need Java 21+: the newest JDK >= 21 is taken from
  ``$NEO4J_JAVA_HOME``, ``$JAVA_HOME`` or ``/usr/lib/jvm/*``.
* Every start gets a fresh folder under ``.cache/neo4j/run/`` holding its config,
  data and logs; Bolt listens on a free port of 127.0.0.1 only, HTTP and HTTPS
  are off, usage reporting and fleet discovery are off, heap and page cache are
  small, and the ``neo4j`` user gets a random password.  ``stop`` sends SIGTERM
  (SIGKILL after a timeout) and deletes that folder and the env file.
* ``start`` on a running server reuses it.  ``stop`` with nothing running is fine.
* ``stop --keep`` stops the server but keeps its run folder, ``server.json`` and env
  file; the next ``start`` resumes that folder on the same port with the same password
  and data (it fails, keeping them, if the port has been taken meanwhile). A plain
  ``stop`` of a kept server deletes it like any other.
* ``start --persistent`` launches a server that is never thrown away by ``start``: when
  its process is gone (``stop --keep``, a crash, SIGKILL, a reboot), the next ``start``
  resumes its run folder like a kept one, on the same port with the same password and
  data (Neo4j recovers its store from its transaction log). The mark is recorded in
  ``server.json``, so a later ``start`` without the flag resumes it too. ``stop --keep``
  stops it; a plain ``stop`` deletes it like any other.
* If ``NEO4J_URI`` is already set in the environment, ``start`` only writes the
  env file from ``NEO4J_URI``/``NEO4J_USER``/``NEO4J_PASSWORD`` and starts nothing;
  ``stop`` never touches a server it did not start.

Only the Python standard library is used: this runs before the project's
virtual environment exists.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import os
import re
import secrets
import shutil
import signal
import socket
import string
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

# Pinned Neo4j release: keep in step with <neo4j.version> in scripts/neo4j/pom.xml.
NEO4J_VERSION = "2026.08.1"
MIN_JAVA_MAJOR = 21
ENTRY_POINT = "org.neo4j.server.Neo4jCommunity"
ADMIN_TOOL = "org.neo4j.cli.AdminTool"
NEO4J_USER = "neo4j"

# Small beside the machine's 24 GiB. A 1 GiB heap filled its old generation during bulk
# writes: G1's collector and concurrent marking took 13-14 % of the server's CPU over
# 20,000 entities and their vectors, against 1.5 % with 2 GiB (docs/neo4j.md, "Server
# memory"). Initial and maximum are equal, so the heap is not resized under load.
HEAP_INITIAL = "2g"
HEAP_MAX = "2g"
PAGE_CACHE = "1g"

START_TIMEOUT_S = 120.0
STOP_TIMEOUT_S = 60.0
LOG_TAIL_LINES = 80

REPO_ROOT = Path(__file__).resolve().parent.parent
POM = REPO_ROOT / "scripts" / "neo4j" / "pom.xml"
CACHE_DIR = REPO_ROOT / ".cache" / "neo4j"
DIST_DIR = CACHE_DIR / f"dist-{NEO4J_VERSION}"
LIB_DIR = DIST_DIR / "lib"
DIST_COMPLETE = DIST_DIR / ".complete"
DIST_LOCK_FILE = CACHE_DIR / ".dist.lock"
# Instance names: a folder of CACHE_DIR that is none of the default instance's entries.
NAME_PATTERN = re.compile(r"[a-z0-9][a-z0-9_-]{0,39}")
RESERVED_NAMES = {"run"}

# Flags from the jvm settings of Neo4j's default neo4j.conf, plus a hard exit on OOM.
JVM_FLAGS = [
    "-XX:+UseG1GC",
    "-XX:-OmitStackTraceInFastThrow",
    "-XX:+UnlockExperimentalVMOptions",
    "-XX:+TrustFinalNonStaticFields",
    "-XX:+DisableExplicitGC",
    "-XX:+ExitOnOutOfMemoryError",
    "-Djdk.nio.maxCachedBufferSize=1024",
    "-Dio.netty.tryReflectionSetAccessible=true",
    "--add-opens=java.base/java.nio=ALL-UNNAMED",
    "--add-opens=java.base/java.io=ALL-UNNAMED",
    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
    "--enable-native-access=ALL-UNNAMED",
    "-Dlog4j2.disable.jmx=true",
    "-Dfile.encoding=UTF-8",
    # Lucene's SIMD distance functions (the Java Vector API): without it the vector index
    # computes every HNSW distance in scalar code and Neo4j logs a warning at first use.
    "--add-modules=jdk.incubator.vector",
]
# Java 24+ warns on sun.misc.Unsafe memory access unless it is allowed explicitly.
JVM_FLAGS_JAVA24 = ["--sun-misc-unsafe-memory-access=allow"]


class Neo4jServerError(RuntimeError):
    """A failure to report to the user as one clear message."""


@dataclass(frozen=True)
class Instance:
    """Where one managed server keeps its state: the default instance directly in
    CACHE_DIR (where it always has), a named one in CACHE_DIR/<name>."""

    name: str | None
    home: Path

    @classmethod
    def called(cls, name: str | None) -> Instance:
        if name is None:
            return cls(None, CACHE_DIR)
        if not NAME_PATTERN.fullmatch(name) or name in RESERVED_NAMES or name.startswith("dist-"):
            raise Neo4jServerError(
                f"bad instance name {name!r}: use lower-case letters, digits, '-' and '_' "
                "(not 'run', not 'dist-...')"
            )
        return cls(name, CACHE_DIR / name)

    @property
    def runs_dir(self) -> Path:
        return self.home / "run"

    @property
    def env_file(self) -> Path:
        return self.home / "env"

    @property
    def pid_file(self) -> Path:
        return self.home / "neo4j.pid"

    @property
    def state_file(self) -> Path:
        return self.home / "server.json"

    @property
    def lock_file(self) -> Path:
        return self.home / ".lock"


@dataclass
class ServerState:
    """What ``start`` records about the server it launched (``server.json``); ``kept``
    when ``stop --keep`` stopped it and the next ``start`` resumes its run folder;
    ``persistent`` when ``start`` resumes that folder whatever stopped the server."""

    pid: int
    port: int
    password: str
    run_dir: str
    version: str
    kept: bool = False
    persistent: bool = False

    @property
    def uri(self) -> str:
        return f"bolt://127.0.0.1:{self.port}"


def log(message: str) -> None:
    print(f"neo4j_server: {message}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- Java


@dataclass(frozen=True)
class Jdk:
    home: Path
    major: int

    @property
    def java(self) -> Path:
        return self.home / "bin" / "java"


def _jdk_major(home: Path) -> int | None:
    """The major version of the JDK at ``home``, or None if it is not one."""
    java = home / "bin" / "java"
    if not java.is_file():
        return None
    release = home / "release"
    version: str | None = None
    if release.is_file():
        match = re.search(r'^JAVA_VERSION="([^"]+)"', release.read_text(errors="replace"), re.M)
        if match:
            version = match.group(1)
    if version is None:
        try:
            proc = subprocess.run(
                [str(java), "-version"], capture_output=True, text=True, timeout=30, check=False
            )
        except (OSError, subprocess.TimeoutExpired):
            return None
        match = re.search(r'version "([^"]+)"', proc.stderr)
        if not match:
            return None
        version = match.group(1)
    # "25.0.3", "21", "17.0.15+6", or the old style "1.8.0_402".
    match = re.match(r"(?:1\.)?(\d+)", version)
    return int(match.group(1)) if match else None


def find_jdk() -> Jdk:
    """The JDK for Neo4j: $NEO4J_JAVA_HOME, else $JAVA_HOME, else the newest in /usr/lib/jvm."""
    for var in ("NEO4J_JAVA_HOME", "JAVA_HOME"):
        value = os.environ.get(var)
        if value:
            major = _jdk_major(Path(value))
            if major is not None and major >= MIN_JAVA_MAJOR:
                return Jdk(Path(value), major)
            if var == "NEO4J_JAVA_HOME":
                raise Neo4jServerError(f"NEO4J_JAVA_HOME={value} is not a JDK {MIN_JAVA_MAJOR}+")
    candidates: list[Jdk] = []
    for home in sorted(Path("/usr/lib/jvm").glob("*")):
        if home.is_symlink():
            continue
        major = _jdk_major(home)
        if major is not None and major >= MIN_JAVA_MAJOR:
            candidates.append(Jdk(home, major))
    if not candidates:
        raise Neo4jServerError(
            f"Neo4j {NEO4J_VERSION} needs Java {MIN_JAVA_MAJOR} or newer, and none was found in "
            "$NEO4J_JAVA_HOME, $JAVA_HOME or /usr/lib/jvm. Install a JDK 21+ "
            "(e.g. `apt-get install openjdk-21-jdk-headless`) or set NEO4J_JAVA_HOME."
        )
    return max(candidates, key=lambda jdk: jdk.major)


# ------------------------------------------------------------------------- fetch


def ensure_distribution() -> Path:
    """Copy the server's jars into the cache with Maven, unless already there; one
    fetch for every instance (under a lock of its own)."""
    with locked(DIST_LOCK_FILE):
        return _fetch_distribution()


def _fetch_distribution() -> Path:
    if DIST_COMPLETE.is_file():
        return LIB_DIR
    mvn = shutil.which("mvn")
    if mvn is None:
        raise Neo4jServerError("`mvn` is not on PATH; install Maven (apt-get install maven)")
    log(f"fetching Neo4j {NEO4J_VERSION} with Maven (first run only)…")
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f"dist-{NEO4J_VERSION}.", dir=CACHE_DIR))
    cmd = [
        mvn,
        "-q",
        "-B",
        "-Dstyle.color=never",
        "-f",
        str(POM),
        f"-Dneo4j.version={NEO4J_VERSION}",
        "dependency:copy-dependencies",
        f"-DoutputDirectory={staging / 'lib'}",
    ]
    started = time.monotonic()
    # Maven itself runs on whatever JDK it finds; copying jars needs no particular one.
    proc = subprocess.run(cmd, cwd=REPO_ROOT, capture_output=True, text=True, check=False)
    if proc.returncode != 0 or not any((staging / "lib").glob(f"neo4j-{NEO4J_VERSION}.jar")):
        shutil.rmtree(staging, ignore_errors=True)
        output = (proc.stdout + proc.stderr).strip()[-4000:]
        raise Neo4jServerError(
            f"Maven could not fetch Neo4j {NEO4J_VERSION} (exit {proc.returncode}):\n{output}"
        )
    (staging / ".complete").write_text(f"{NEO4J_VERSION}\n")
    shutil.rmtree(DIST_DIR, ignore_errors=True)
    staging.rename(DIST_DIR)
    DIST_DIR.chmod(0o755)
    count = sum(1 for _ in LIB_DIR.glob("*.jar"))
    log(f"fetched {count} jars in {time.monotonic() - started:.1f}s into {DIST_DIR}")
    return LIB_DIR


# ------------------------------------------------------------------ networking


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def bolt_handshake(host: str, port: int, timeout: float = 2.0) -> tuple[int, int] | None:
    """Do a Bolt handshake; return the agreed (major, minor) version, or None if nothing answers."""
    # Magic preamble, then four proposals [0, range, minor, major]: 5.8 down to 5.0, 4.4..4.2.
    proposals = bytes([0, 8, 8, 5, 0, 2, 4, 4, 0, 0, 0, 0, 0, 0, 0, 0])
    try:
        with socket.create_connection((host, port), timeout=timeout) as sock:
            sock.settimeout(timeout)
            sock.sendall(b"\x60\x60\xb0\x17" + proposals)
            reply = b""
            while len(reply) < 4:
                chunk = sock.recv(4 - len(reply))
                if not chunk:
                    return None
                reply += chunk
    except OSError:
        return None
    (version,) = struct.unpack(">I", reply)
    if version == 0:
        return None
    return version & 0xFF, (version >> 8) & 0xFF


# ----------------------------------------------------------------- processes


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie is not alive for our purposes.
    with contextlib.suppress(OSError):
        stat = Path(f"/proc/{pid}/stat").read_text()
        if stat.rsplit(")", 1)[1].split()[0] == "Z":
            return False
    return True


def is_our_server(state: ServerState) -> bool:
    """True if state.pid is alive and is the Neo4j we launched (not a recycled pid)."""
    if not pid_alive(state.pid):
        return False
    try:
        cmdline = Path(f"/proc/{state.pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return True  # no /proc: trust the pid
    args = [arg.decode(errors="replace") for arg in cmdline]
    return ENTRY_POINT in args and f"--home-dir={state.run_dir}" in args


def read_state(instance: Instance) -> ServerState | None:
    try:
        data = json.loads(instance.state_file.read_text())
        return ServerState(**data)
    except (OSError, ValueError, TypeError):
        return None


def write_state(instance: Instance, state: ServerState) -> None:
    instance.state_file.write_text(json.dumps(asdict(state), indent=2) + "\n")
    instance.state_file.chmod(0o600)
    if state.kept:
        instance.pid_file.unlink(missing_ok=True)
    else:
        instance.pid_file.write_text(f"{state.pid}\n")


def write_env_file(instance: Instance, uri: str, user: str, password: str) -> None:
    instance.home.mkdir(parents=True, exist_ok=True)
    tmp = instance.env_file.with_suffix(".tmp")
    tmp.write_text(
        f"NEO4J_URI={uri}\nNEO4J_USER={user}\nNEO4J_PASSWORD={password}\n"
        "REDSTRING_BACKEND=neo4j\n"
        f"REDSTRING_NEO4J_URI={uri}\nREDSTRING_NEO4J_USER={user}\n"
        f"REDSTRING_NEO4J_PASSWORD={password}\n"
    )
    tmp.chmod(0o600)
    tmp.replace(instance.env_file)


def clear_files(instance: Instance) -> None:
    for path in (instance.env_file, instance.pid_file, instance.state_file):
        path.unlink(missing_ok=True)


@contextlib.contextmanager
def locked(lock_file: Path) -> Iterator[None]:
    """Serialise concurrent start/stop calls (e.g. parallel make targets) on `lock_file`."""
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    ignore = CACHE_DIR / ".gitignore"
    if not ignore.exists():
        ignore.write_text("*\n")
    lock_file.parent.mkdir(parents=True, exist_ok=True)
    with lock_file.open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


# ---------------------------------------------------------------------- config


def random_password(length: int = 24) -> str:
    """Letters and digits only: safe unquoted in the env file, never read as a CLI option."""
    alphabet = string.ascii_letters + string.digits
    return "".join(secrets.choice(alphabet) for _ in range(length))


def neo4j_conf(run_dir: Path, port: int) -> str:
    settings = {
        "server.directories.data": run_dir / "data",
        "server.directories.logs": run_dir / "logs",
        "server.directories.run": run_dir / "run",
        "server.directories.import": run_dir / "import",
        "server.directories.plugins": run_dir / "plugins",
        "server.directories.licenses": run_dir / "licenses",
        "server.default_listen_address": "127.0.0.1",
        "server.default_advertised_address": "127.0.0.1",
        "server.bolt.enabled": "true",
        "server.bolt.listen_address": f"127.0.0.1:{port}",
        "server.bolt.advertised_address": f"127.0.0.1:{port}",
        "server.bolt.tls_level": "DISABLED",
        "server.http.enabled": "false",
        "server.https.enabled": "false",
        "server.memory.heap.initial_size": HEAP_INITIAL,
        "server.memory.heap.max_size": HEAP_MAX,
        "server.memory.pagecache.size": PAGE_CACHE,
        "dbms.security.auth_enabled": "true",
        "dbms.usage_report.enabled": "false",
        "server.fleet_discovery.enabled": "false",
        "server.bolt.telemetry.enabled": "false",
        "client.allow_telemetry": "false",
        "dbms.fleet_manager.enabled": "false",
        "db.logs.query.enabled": "OFF",
        # Internal setting: without it Bolt's shutdown idles 2 x 5 s, making `stop` take 10 s.
        # If a newer Neo4j rejects it (strict config validation), drop this line.
        "internal.dbms.bolt.netty_server_shutdown_quiet_period_duration": "0s",
        "db.tx_log.rotation.retention_policy": "1 files",
    }
    lines = ["# Generated by scripts/neo4j_server.py for one run folder."]
    lines += [f"{key}={value}" for key, value in settings.items()]
    return "\n".join(lines) + "\n"


def java_command(jdk: Jdk, lib_dir: Path, main: str, *args: str) -> list[str]:
    flags = list(JVM_FLAGS)
    if jdk.major >= 24:
        flags += JVM_FLAGS_JAVA24
    return [str(jdk.java), *flags, "-cp", f"{lib_dir}/*", main, *args]


def neo4j_env(jdk: Jdk, run_dir: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        JAVA_HOME=str(jdk.home),
        NEO4J_HOME=str(run_dir),
        NEO4J_CONF=str(run_dir / "conf"),
    )
    # Keep the caller's JVM options and connection settings away from the server.
    for var in ("JAVA_OPTS", "JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS", "NEO4J_URI"):
        env.pop(var, None)
    return env


def tail(path: Path, lines: int = LOG_TAIL_LINES) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return f"(no {path.name})"


# ---------------------------------------------------------------------- commands
def start(instance: Instance, *, persistent: bool = False) -> int:
    """Start the instance's server: reuse a running one, resume a kept or persistent one,
    else launch a fresh one, `persistent` if asked (the default instance only points at
    ``NEO4J_URI`` when that is set)."""
    external = os.environ.get("NEO4J_URI") if instance.name is None else None
    state = read_state(instance)
    env_file = instance.env_file
    if external and not (state is not None and state.uri == external and is_our_server(state)):
        user = os.environ.get("NEO4J_USER", NEO4J_USER)
        write_env_file(instance, external, user, os.environ.get("NEO4J_PASSWORD", ""))
        log(f"NEO4J_URI is set ({external}): using that server, starting none; wrote {env_file}")
        return 0

    if state is not None and is_our_server(state):
        if bolt_handshake("127.0.0.1", state.port) is None:
            wait_for_bolt(state, Path(state.run_dir), subprocess_handle=None)
        write_env_file(instance, state.uri, NEO4J_USER, state.password)
        log(f"already running (pid {state.pid}) at {state.uri}; wrote {env_file}")
        return 0

    started = time.monotonic()
    if state is not None and (state.kept or state.persistent) and Path(state.run_dir).is_dir():
        if not state.kept:
            log(f"the persistent server (pid {state.pid}) is gone; resuming its run folder")
        state = resume(find_jdk(), ensure_distribution(), instance, state)
        how = "resumed with its data"
    else:
        if state is not None:
            log(f"removing leftovers of a server that is gone (pid {state.pid})")
        remove_runs(instance)
        persistent = persistent or (state is not None and state.persistent)
        state = launch(find_jdk(), ensure_distribution(), instance, persistent=persistent)
        how = "is up" + (" (persistent)" if persistent else "")
    write_env_file(instance, state.uri, NEO4J_USER, state.password)
    log(
        f"Neo4j {NEO4J_VERSION} {how} at {state.uri} (pid {state.pid}) after "
        f"{time.monotonic() - started:.1f}s; wrote {env_file}"
    )
    return 0


def launch(jdk: Jdk, lib_dir: Path, instance: Instance, *, persistent: bool) -> ServerState:
    """Set up a fresh run folder, set the password, start the server and wait for Bolt."""
    instance.runs_dir.mkdir(parents=True, exist_ok=True)
    run_dir = Path(tempfile.mkdtemp(prefix="neo4j-", dir=instance.runs_dir))
    for sub in ("conf", "data", "logs", "run", "import", "plugins", "licenses"):
        (run_dir / sub).mkdir()
    port = free_port()
    password = random_password()
    (run_dir / "conf" / "neo4j.conf").write_text(neo4j_conf(run_dir, port))
    env = neo4j_env(jdk, run_dir)

    admin = subprocess.run(
        java_command(jdk, lib_dir, ADMIN_TOOL, "dbms", "set-initial-password", password),
        env=env,
        cwd=run_dir,
        capture_output=True,
        text=True,
        check=False,
    )
    if admin.returncode != 0:
        shutil.rmtree(run_dir, ignore_errors=True)
        raise Neo4jServerError(
            f"neo4j-admin dbms set-initial-password failed (exit {admin.returncode}):\n"
            f"{(admin.stdout + admin.stderr).strip()[-4000:]}"
        )
    try:
        return run_server(jdk, lib_dir, instance, run_dir, port, password, persistent)
    except Neo4jServerError:
        shutil.rmtree(run_dir, ignore_errors=True)
        clear_files(instance)
        raise


def resume(jdk: Jdk, lib_dir: Path, instance: Instance, kept: ServerState) -> ServerState:
    """Start the server of a kept run folder again: its config (so its port), its data and
    its password. On failure the folder and the state stay kept for another try."""
    if not port_is_free(kept.port):
        raise Neo4jServerError(
            f"port {kept.port} of the kept server in {kept.run_dir} is in use; free it and "
            "`start` again, or `stop` (which deletes the kept data) and `start` afresh"
        )
    try:
        return run_server(
            jdk,
            lib_dir,
            instance,
            Path(kept.run_dir),
            kept.port,
            kept.password,
            kept.persistent,
        )
    except Neo4jServerError:
        write_state(instance, kept)
        raise


def port_is_free(port: int) -> bool:
    """Whether a server could listen on 127.0.0.1:`port` now. SO_REUSEADDR, as Neo4j's
    own listener sets it: the connections the stopped server closed linger in TIME_WAIT
    on that port, and only another listener makes it unusable."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def run_server(
    jdk: Jdk,
    lib_dir: Path,
    instance: Instance,
    run_dir: Path,
    port: int,
    password: str,
    persistent: bool,
) -> ServerState:
    """Start the server of `run_dir` (configured for `port`) and wait for Bolt; on failure
    the process is stopped and `Neo4jServerError` raised."""
    env = neo4j_env(jdk, run_dir)
    console_log = run_dir / "logs" / "console.log"
    heap = [f"-Xms{HEAP_INITIAL}", f"-Xmx{HEAP_MAX}"]
    cmd = java_command(
        jdk,
        lib_dir,
        ENTRY_POINT,
        f"--home-dir={run_dir}",
        f"--config-dir={run_dir / 'conf'}",
        "--console-mode",
    )
    cmd[1:1] = heap
    log(f"starting Neo4j {NEO4J_VERSION} on Java {jdk.major} ({jdk.home}), port {port}…")
    with console_log.open("ab") as out:
        proc = subprocess.Popen(
            cmd,
            env=env,
            cwd=run_dir,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            close_fds=True,
        )
    state = ServerState(
        pid=proc.pid,
        port=port,
        password=password,
        run_dir=str(run_dir),
        version=NEO4J_VERSION,
        persistent=persistent,
    )
    write_state(instance, state)
    try:
        wait_for_bolt(state, run_dir, subprocess_handle=proc)
    except Neo4jServerError:
        stop_process(state)
        raise
    return state


def wait_for_bolt(
    state: ServerState, run_dir: Path, subprocess_handle: subprocess.Popen[bytes] | None
) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        exited = (
            subprocess_handle.poll() is not None
            if subprocess_handle is not None
            else not pid_alive(state.pid)
        )
        if exited:
            raise Neo4jServerError(
                "Neo4j exited during startup. Its console log:\n"
                f"{tail(run_dir / 'logs' / 'console.log')}"
            )
        if bolt_handshake("127.0.0.1", state.port) is not None:
            return
        time.sleep(0.25)
    raise Neo4jServerError(
        f"Neo4j did not answer Bolt on 127.0.0.1:{state.port} within {START_TIMEOUT_S:.0f}s. "
        f"Server log:\n{tail(run_dir / 'logs' / 'console.log')}\n--- neo4j.log:\n"
        f"{tail(run_dir / 'logs' / 'neo4j.log')}"
    )


def stop_process(state: ServerState) -> None:
    """SIGTERM the server (Neo4j shuts down cleanly on it), SIGKILL after STOP_TIMEOUT_S."""
    if not is_our_server(state):
        return
    with contextlib.suppress(ProcessLookupError):
        os.kill(state.pid, signal.SIGTERM)
    deadline = time.monotonic() + STOP_TIMEOUT_S
    while time.monotonic() < deadline:
        _reap(state.pid)
        if not pid_alive(state.pid):
            return
        time.sleep(0.2)
    log(f"Neo4j (pid {state.pid}) did not stop within {STOP_TIMEOUT_S:.0f}s; killing it")
    with contextlib.suppress(ProcessLookupError):
        os.kill(state.pid, signal.SIGKILL)
    for _ in range(50):
        _reap(state.pid)
        if not pid_alive(state.pid):
            return
        time.sleep(0.1)


def _reap(pid: int) -> None:
    """Collect the exit status if the server is our own child (same `start` process)."""
    with contextlib.suppress(ChildProcessError, OSError):
        os.waitpid(pid, os.WNOHANG)


def stop(instance: Instance, *, keep: bool = False) -> int:
    """Stop the instance's server and delete its run folder and files; with `keep`, keep
    them (data, port, password) for the next `start` to resume."""
    state = read_state(instance)
    if state is None:
        log("no managed Neo4j server is running")
    elif is_our_server(state):
        started = time.monotonic()
        log(f"stopping Neo4j (pid {state.pid})…")
        stop_process(state)
        log(f"stopped in {time.monotonic() - started:.1f}s")
    else:
        log(f"Neo4j (pid {state.pid}) was not running" + ("" if keep else "; cleaning up"))
    if keep and state is not None and Path(state.run_dir).is_dir():
        state.kept = True
        write_state(instance, state)
        log(f"kept its data, port {state.port} and password in {state.run_dir}; `start` resumes it")
        return 0
    remove_runs(instance)
    clear_files(instance)
    return 0


def remove_runs(instance: Instance) -> None:
    """Delete every run folder (config, data, logs) of the instance: it has one server at
    a time."""
    if instance.runs_dir.is_dir():
        for run_dir in instance.runs_dir.glob("neo4j-*"):
            shutil.rmtree(run_dir, ignore_errors=True)


def status(instance: Instance) -> int:
    state = read_state(instance)
    if state is not None and is_our_server(state):
        bolt = bolt_handshake("127.0.0.1", state.port)
        answer = f"Bolt {bolt[0]}.{bolt[1]}" if bolt else "Bolt not answering"
        print(f"running: Neo4j {state.version}, pid {state.pid}, {state.uri}, {answer}")
        return 0 if bolt else 1
    external = os.environ.get("NEO4J_URI") if instance.name is None else None
    if external:
        print(f"external: NEO4J_URI={external} (not managed by this script)")
        return 0
    if state is not None and (state.kept or state.persistent):
        how = "kept" if state.kept else "persistent"
        print(f"stopped, {how}: {state.uri}, data in {state.run_dir}; `start` resumes it")
        return 1
    print("stopped")
    return 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Fetch, start and stop a throwaway Neo4j Community server (Bolt on 127.0.0.1)."
    )
    parser.add_argument("command", choices=["start", "stop", "status"])
    parser.add_argument(
        "--name",
        help="manage the named instance, its state in .cache/neo4j/NAME/ (default: the "
        "checkout's default server, state in .cache/neo4j/)",
    )
    parser.add_argument(
        "--persistent",
        action="store_true",
        help="with start: a server whose data, port and password survive stops and crashes "
        "(the next start resumes it)",
    )
    parser.add_argument(
        "--keep",
        action="store_true",
        help="with stop: keep the data, port and password; the next start resumes them",
    )
    args = parser.parse_args(argv)
    if args.keep and args.command != "stop":
        parser.error("--keep goes with stop")
    if args.persistent and args.command != "start":
        parser.error("--persistent goes with start")
    try:
        instance = Instance.called(args.name)
        if args.command == "status":
            return status(instance)
        with locked(instance.lock_file):
            if args.command == "start":
                return start(instance, persistent=args.persistent)
            return stop(instance, keep=args.keep)
    except Neo4jServerError as error:
        log(f"error: {error}")
        return 1


if __name__ == "__main__":
    sys.exit(main())
