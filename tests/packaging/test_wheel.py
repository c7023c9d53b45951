"""`pip install redstring` gives the product: the sdist and wheel carry GraphiQL's files.

The sdist is built from this checkout, the wheel from that sdist with no npm
on the PATH (as a user's `pip install` from an sdist would), and the wheel is
installed into a fresh venv outside the checkout. Its server, started from
another folder with every proxy pointing at a closed loopback port, serves
GraphiQL's page, every file the page loads, and the README's query.

The project venv lends the new venv its dependencies (a `.pth` naming a
folder of links to them, redstring's own files left out), so the install
needs no index and no network; pip still checks the wheel's requirements
against them. Without GraphiQL's files and without npm the test is skipped,
unless `E2E_REQUIRED=1` (`make test`), where it fails.
"""

from __future__ import annotations

import base64
import email.parser
import hashlib
import os
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urljoin

import httpx
import pytest

from redstring.adapters.embeddings.static import MODEL_DIR as STATIC_MODEL_DIR
from redstring.api.graphiql import ASSETS, INSTALL_DIR, missing_assets
from redstring.api.graphiql.assets import NOTICES_FILE, notices, shipped_files
from tests.api.page_assets import page_assets
from tests.api.support import DEMO, README_QUERY
from tests.processes import REPO, LoggedProcess, child_environment, free_loopback_port

SRC = REPO / "src"
BUILD_TIMEOUT = 120.0
DEAD_PROXY = "http://127.0.0.1:9"  # the discard port, closed: any proxied request fails


@dataclass(frozen=True)
class Dist:
    sdist: Path
    wheel: Path


def _run(argv: list[str], *, cwd: Path, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        argv,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=BUILD_TIMEOUT,
        check=False,
    )
    assert done.returncode == 0, f"{argv} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def _shipped_names(prefix: Path) -> set[str]:
    """The archive names of GraphiQL's shipped files, under `prefix`."""
    return {(prefix / path.relative_to(SRC)).as_posix() for path in shipped_files()}


def _integrity(content: bytes) -> str:
    return "sha384-" + base64.b64encode(hashlib.sha384(content).digest()).decode()


def _extract(archive: tarfile.TarFile, into: Path) -> None:
    """Extract `archive` with the `data` filter (no links out, no device files, no absolute
    paths) where Python has extraction filters (3.11.4 on); redstring supports 3.11.0 on,
    where the archive, the sdist just built from this checkout, is extracted as it is."""
    if hasattr(tarfile, "data_filter"):
        archive.extractall(into, filter="data")
    else:
        archive.extractall(into)


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Dist:
    if missing_assets() and shutil.which("npm") is None:
        message = f"GraphiQL's files are not installed ({INSTALL_DIR}) and npm is not found"
        if os.environ.get("E2E_REQUIRED") == "1":
            pytest.fail(message)
        pytest.skip(message)
    out = tmp_path_factory.mktemp("dist")
    build = [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out)]
    _run([*build, "--sdist", str(REPO)], cwd=out)
    (sdist,) = out.glob("redstring-*.tar.gz")
    unpacked = tmp_path_factory.mktemp("sdist")
    with tarfile.open(sdist) as archive:
        _extract(archive, unpacked)
    (source,) = unpacked.iterdir()
    no_npm = {**os.environ, "PATH": str(Path(sys.executable).parent)}
    _run([*build, "--wheel", str(source)], cwd=out, env=no_npm)
    (wheel,) = out.glob("redstring-*.whl")
    return Dist(sdist, wheel)


def test_the_sdist_and_the_wheel_carry_graphiqls_files_and_licences_only(dist: Dist) -> None:
    with tarfile.open(dist.sdist) as archive:
        sdist_names = {name for name in archive.getnames() if "/node_modules/" in name}
    top = dist.sdist.name.removesuffix(".tar.gz")
    assert sdist_names == _shipped_names(Path(top, "src"))
    with zipfile.ZipFile(dist.wheel) as archive:
        wheel_names = {name for name in archive.namelist() if "/node_modules/" in name}
        assert wheel_names == _shipped_names(Path())
        for asset in ASSETS:
            name = asset.file().relative_to(SRC).as_posix()
            assert _integrity(archive.read(name)) == asset.integrity, asset.name
        shipped_notices = (INSTALL_DIR / NOTICES_FILE).relative_to(SRC).as_posix()
        assert archive.read(shipped_notices).decode() == notices()


def test_the_sdist_and_the_wheel_carry_the_static_model_and_its_licence(dist: Dist) -> None:
    """The default embedding provider's model ships in the package, byte for byte."""
    shipped = sorted(path for path in STATIC_MODEL_DIR.iterdir() if path.is_file())
    assert {path.name for path in shipped} >= {
        "config.json", "model.safetensors", "tokenizer.json", "NOTICE", "LICENSE"
    }  # fmt: skip
    top = dist.sdist.name.removesuffix(".tar.gz")
    with tarfile.open(dist.sdist) as archive:
        for path in shipped:
            member = archive.extractfile(f"{top}/{path.relative_to(REPO).as_posix()}")
            assert member is not None, path.name
            assert member.read() == path.read_bytes(), path.name
    with zipfile.ZipFile(dist.wheel) as archive:
        for path in shipped:
            assert archive.read(path.relative_to(SRC).as_posix()) == path.read_bytes(), path.name


# The Apache License 2.0 as apache.org long served it and most projects ship it (its
# links http://): the licence pyproject.toml names, reproduced without a change.
APACHE_2_0_SHA256 = "c71d239df91726fc519c6eb72d318ec65820627232b2f796219e87dcf35d0ab4"


def test_the_licence_is_the_apache_licence_unchanged() -> None:
    text = (REPO / "LICENSE").read_bytes()
    assert hashlib.sha256(text).hexdigest() == APACHE_2_0_SHA256
    assert 'license = "Apache-2.0"' in (REPO / "pyproject.toml").read_text(encoding="utf-8")


def test_the_sdist_and_the_wheel_carry_the_licence(dist: Dist) -> None:
    """The sdist at its root, the wheel in its metadata (`License-File`, the file under
    `.dist-info/licenses/`), beside the licence expression."""
    text = (REPO / "LICENSE").read_bytes()
    top = dist.sdist.name.removesuffix(".tar.gz")
    with tarfile.open(dist.sdist) as archive:
        member = archive.extractfile(f"{top}/LICENSE")
        assert member is not None
        assert member.read() == text
    with zipfile.ZipFile(dist.wheel) as archive:
        info = top + ".dist-info"
        metadata = email.parser.Parser().parsestr(archive.read(f"{info}/METADATA").decode())
        assert metadata["License-Expression"] == "Apache-2.0"
        assert metadata.get_all("License-File") == ["LICENSE"]
        assert archive.read(f"{info}/licenses/LICENSE") == text


@pytest.fixture(scope="module")
def installed(dist: Dist, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv outside the checkout with the wheel installed; its `bin` folder."""
    root = tmp_path_factory.mktemp("installed")
    venv = root / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], cwd=root)
    deps = root / "deps"
    deps.mkdir()
    for entry in Path(sysconfig.get_path("purelib")).iterdir():
        if not entry.name.startswith(("redstring", "_editable_impl_redstring", "__editable__")):
            (deps / entry.name).symlink_to(entry)
    python = venv / "bin" / "python"
    purelib = _run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], cwd=root
    ).strip()
    (Path(purelib) / "project-deps.pth").write_text(f"{deps}\n", encoding="utf-8")
    pip = [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-index"]
    _run([*pip, "--no-cache-dir", str(dist.wheel)], cwd=root)
    return venv / "bin"


def _user_env() -> dict[str, str]:
    """A user's shell: no `REDSTRING_*`, no `PYTHONPATH`, and no way out but a dead proxy."""
    env = child_environment(HF_HUB_OFFLINE="1")
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        env[name] = env[name.lower()] = DEAD_PROXY
    env.pop("PYTHONPATH", None)
    return env


@pytest.fixture
def server(installed: Path, tmp_path: Path) -> Iterator[str]:
    """The installed `redstring serve --demo`, started in an empty folder, offline."""
    port = free_loopback_port()
    argv = [str(installed / "redstring"), "serve", "--demo", "--port", str(port)]
    process = LoggedProcess("installed redstring", argv, env=_user_env(), cwd=tmp_path)
    try:
        base = f"http://127.0.0.1:{port}"
        process.wait_until_answering(f"{base}/readyz")
        yield base
    finally:
        process.stop()


def test_the_installed_package_is_the_wheels(installed: Path, tmp_path: Path) -> None:
    where = _run(
        [str(installed / "python"), "-c", "import redstring; print(redstring.__file__)"],
        cwd=tmp_path,
        env=_user_env(),
    )
    assert Path(where.strip()).is_relative_to(installed.parent)


def test_the_installed_server_serves_graphiql_and_the_readme_query(server: str) -> None:
    with httpx.Client(timeout=10.0) as http:
        page = http.get(f"{server}/graphql", headers={"accept": "text/html"})
        assert page.status_code == 200
        loaded = page_assets(page.text)
        assert [asset.integrity for asset in loaded] == [asset.integrity for asset in ASSETS]
        for asset in loaded:
            url = urljoin(str(page.url), asset.url)
            assert url.startswith(f"{server}/graphiql/"), url
            response = http.get(url)
            assert response.status_code == 200, url
            kind = "text/css" if url.endswith(".css") else "text/javascript"
            assert response.headers["content-type"] == f"{kind}; charset=utf-8", url
            assert _integrity(response.content) == asset.integrity, url
        answer = http.post(
            f"{server}/graphql", json={"query": README_QUERY, "variables": {"tenant": DEMO}}
        )
        assert answer.status_code == 200
        assert "errors" not in answer.json()
        matches = answer.json()["data"]["retrieve"]["matches"]
        assert matches[0]["entity"]["name"] == "Acme Corp"
        assert matches[0]["entity"]["relationships"]
