"""The files GraphiQL's page loads: npm package, version, path and integrity hash of each.

The versions are those `package.json` pins (a test keeps the two equal), and
the hashes were taken from the installed files; a CDN serving the same
package version serves the same bytes, so one hash fits both sources.

This module imports nothing but the standard library: the build hook
(`hatch_build.py`) loads it by path to learn which files the wheel carries.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

CDN_BASE = "https://unpkg.com"
INSTALL_DIR = Path(__file__).resolve().parent / "node_modules"
ROUTE_PREFIX = "graphiql"
LICENCE_FILE = "LICENSE"  # what graphiql, react and react-dom each ship at their root


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


def shipped_files(install_dir: Path = INSTALL_DIR) -> list[Path]:
    """What the wheel and sdist carry of `install_dir`: each asset, and the licence
    of each package an asset comes from (its `LICENSE`), nothing more."""
    packages = dict.fromkeys(asset.package for asset in ASSETS)
    licences = [install_dir / package / LICENCE_FILE for package in packages]
    return [asset.file(install_dir) for asset in ASSETS] + licences
