"""The files GraphiQL's page loads: npm package, version, path and integrity hash of each.

The versions are those `package.json` pins (a test keeps the two equal), and
the hashes were taken from the installed files; a CDN serving the same
package version serves the same bytes, so one hash fits both sources.

This module imports nothing but the standard library: the build hook
(`hatch_build.py`) loads it by path to learn which files the wheel carries.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

CDN_BASE = "https://unpkg.com"
INSTALL_DIR = Path(__file__).resolve().parent / "node_modules"
ROUTE_PREFIX = "graphiql"
LICENCE_FILE = "LICENSE"  # what graphiql, react and react-dom each ship at their root
# The licences of every package `npm ci` installs: graphiql.min.js bundles the code
# of most of them (graphql-js, CodeMirror, markdown-it, ...), and npm ships only
# GraphiQL's own LICENSE beside it.
NOTICES_FILE = "THIRD_PARTY_LICENSES.txt"
_LICENCE_TEXT = re.compile(r"^(licen[cs]e|copying|notice)([-._].*)?$", re.IGNORECASE)


class AssetSource(StrEnum):
    """Where the browser fetches GraphiQL's files from."""

    LOCAL = "local"  # this server, under /graphiql/ (works offline)
    CDN = "cdn"  # a public CDN (nothing to install)


@dataclass(frozen=True)
class Asset:
    """One file of one pinned npm package."""

    package: str
    version: str
    path: str
    integrity: str

    @property
    def name(self) -> str:
        """`package@version/path`: the same on this server and on the CDN."""
        return f"{self.package}@{self.version}/{self.path}"

    @property
    def media_type(self) -> str:
        kind = "text/css" if self.path.endswith(".css") else "text/javascript"
        return f"{kind}; charset=utf-8"

    def url(self, source: AssetSource) -> str:
        """The URL the page loads this file from. The local one is relative to the
        page (`/graphql`), so a server mounted under a prefix keeps working."""
        if source is AssetSource.CDN:
            return f"{CDN_BASE}/{self.name}"
        return f"{ROUTE_PREFIX}/{self.name}"

    def file(self, install_dir: Path = INSTALL_DIR) -> Path:
        """Where `npm ci` puts this file in a checkout, and where the wheel carries it."""
        return install_dir / self.package / self.path


GRAPHIQL_STYLE = Asset(
    "graphiql",
    "3.8.3",
    "graphiql.min.css",
    "sha384-Mq3vbRBY71jfjQAt/DcjxUIYY33ksal4cgdRt9U/hNPvHBCaT2JfJ/PTRiPKf0aM",
)
REACT = Asset(
    "react",
    "18.2.0",
    "umd/react.production.min.js",
    "sha384-tMH8h3BGESGckSAVGZ82T9n90ztNXxvdwvdM6UoR56cYcf+0iGXBliJ29D+wZ/x8",
)
REACT_DOM = Asset(
    "react-dom",
    "18.2.0",
    "umd/react-dom.production.min.js",
    "sha384-bm7MnzvK++ykSwVJ2tynSE5TRdN+xL418osEVF2DE/L/gfWHj91J2Sphe582B1Bh",
)
GRAPHIQL_SCRIPT = Asset(
    "graphiql",
    "3.8.3",
    "graphiql.min.js",
    "sha384-HbRVEFG0JGJZeAHCJ9Xm2+tpknBQ7QZmNlO/DgZtkZ0aJSypT96YYGRNod99l9Ie",
)

STYLES = (GRAPHIQL_STYLE,)
SCRIPTS = (REACT, REACT_DOM, GRAPHIQL_SCRIPT)  # in load order: GraphiQL needs React first
ASSETS = STYLES + SCRIPTS


def missing_assets(install_dir: Path = INSTALL_DIR) -> list[Asset]:
    """The assets not installed in `install_dir`."""
    return [asset for asset in ASSETS if not asset.file(install_dir).is_file()]


def installed_files(install_dir: Path = INSTALL_DIR) -> list[Path]:
    """What `npm ci` puts in `install_dir` that the wheel and sdist carry: each
    asset, and the licence of each package an asset comes from (its `LICENSE`)."""
    packages = dict.fromkeys(asset.package for asset in ASSETS)
    licences = [install_dir / package / LICENCE_FILE for package in packages]
    return [asset.file(install_dir) for asset in ASSETS] + licences


def shipped_files(install_dir: Path = INSTALL_DIR) -> list[Path]:
    """What the wheel and sdist carry of `install_dir`, nothing more: the installed
    files, and the notices of every package (`NOTICES_FILE`, from `notices`)."""
    return [*installed_files(install_dir), install_dir / NOTICES_FILE]


def notices(install_dir: Path = INSTALL_DIR) -> str:
    """The licence texts of every package that the lock file beside `install_dir`
    (`package-lock.json`, npm's place for it) installs, its dev packages aside, read
    from each package's folder: its files named LICENSE, LICENCE, COPYING or NOTICE
    (any case, any suffix). A package that ships none is listed with the licence and
    author its `package.json` declares.

    Raises `FileNotFoundError` when a package the lock file requires is not installed.
    """
    lock_file = install_dir.parent / "package-lock.json"
    packages = json.loads(lock_file.read_text(encoding="utf-8"))["packages"]
    sections: list[str] = []
    count = 0
    for location, entry in sorted(packages.items()):
        if not location or entry.get("dev"):
            continue
        folder = install_dir.parent / location
        if not folder.is_dir():
            if entry.get("optional"):
                continue
            raise FileNotFoundError(f"{folder} is not installed: run `make graphiql`")
        count += 1
        name = location.rpartition("node_modules/")[2]
        declared = entry.get("license") or "no licence declared"
        sections += ["", "=" * 79, f"{name} {entry.get('version', '')} ({declared})", "=" * 79]
        texts = sorted(
            path for path in folder.iterdir() if path.is_file() and _LICENCE_TEXT.match(path.name)
        )
        for path in texts:
            sections += ["", f"--- {path.name}", "", path.read_text(encoding="utf-8").strip()]
        if not texts:
            manifest = json.loads((folder / "package.json").read_text(encoding="utf-8"))
            author = manifest.get("author")
            if isinstance(author, dict):
                author = " ".join(str(author[key]) for key in ("name", "email") if key in author)
            by = f", by {author}" if author else ""
            sections += [
                "",
                f"The package ships no licence text; its package.json declares {declared}{by}.",
            ]
    header = [
        "Third-party software in GraphiQL's files",
        "",
        "redstring's wheel carries GraphiQL's browser files (graphiql.min.js and",
        "graphiql.min.css) and React's. graphiql.min.js bundles the code of GraphiQL's",
        f"own dependencies. Here are the licences of the {count} npm packages that",
        f"{lock_file.name} installs, each as the package ships it.",
    ]
    return "\n".join(header + sections) + "\n"
