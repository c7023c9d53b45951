"""Build hook: the wheel and sdist carry GraphiQL's pinned browser files and their licences.

The files are not in git (docs/adr/0005-graphiql-files-in-the-wheel.md): in a
checkout `npm ci` installs them into `src/redstring/api/graphiql/node_modules/`
(`make graphiql`), and this hook copies the few the page loads, with each
package's `LICENSE` and the licence texts of every package installed
(`THIRD_PARTY_LICENSES.txt`, written here), into the sdist and the wheel at
the same place, so the installed server finds them where a checkout does.
A wheel built from the sdist needs no npm: the sdist already holds them. The
list of files comes from `assets.py` itself, loaded by path (it imports only
the standard library).
"""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

NPM_DIR = Path("src", "redstring", "api", "graphiql")
NPM_HIDDEN_LOCK = ".package-lock.json"  # what `npm ci` writes into node_modules/


def _load_assets(root: Path) -> ModuleType:
    path = root / NPM_DIR / "assets.py"
    spec = importlib.util.spec_from_file_location("_redstring_graphiql_assets", path)
    if spec is None or spec.loader is None:
        raise RuntimeError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while building
    spec.loader.exec_module(module)
    return module


def _integrity(path: Path) -> str:
    return "sha384-" + base64.b64encode(hashlib.sha384(path.read_bytes()).digest()).decode()


class GraphiQLFilesHook(BuildHookInterface):  # type: ignore[type-arg]
    """Adds GraphiQL's shipped files to every standard (non-editable) build."""

    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if version == "editable":  # an editable install serves the checkout's own files
            return
        root = Path(self.root)
        assets = _load_assets(root)
        install_dir = root / NPM_DIR / "node_modules"
        if any(not path.is_file() for path in assets.installed_files(install_dir)):
            self._npm_ci(root / NPM_DIR)
        missing = [path for path in assets.installed_files(install_dir) if not path.is_file()]
        if missing:
            raise RuntimeError(f"GraphiQL's files are still missing after `npm ci`: {missing}")
        if (install_dir / NPM_HIDDEN_LOCK).is_file():
            # A checkout's install, every package in it: its notices are written anew.
            # An sdist carries the notices and only the shipped files, so keeps them.
            notices = assets.notices(install_dir)
            (install_dir / assets.NOTICES_FILE).write_text(notices, encoding="utf-8")
        elif not (install_dir / assets.NOTICES_FILE).is_file():
            raise RuntimeError(
                f"{install_dir / assets.NOTICES_FILE} is missing: run `make graphiql`"
            )
        for asset in assets.ASSETS:
            if _integrity(asset.file(install_dir)) != asset.integrity:
                raise RuntimeError(
                    f"{asset.file(install_dir)} is not the pinned {asset.name} "
                    "(its hash differs from assets.py): run `make graphiql` again"
                )
        base = root if self.target_name == "sdist" else root / "src"
        for path in assets.shipped_files(install_dir):
            build_data["force_include"][str(path)] = path.relative_to(base).as_posix()

    def _npm_ci(self, npm_dir: Path) -> None:
        """Install the pinned packages, as `make graphiql` does, with the options of
        `npm_dir`'s `.npmrc` (no install scripts); only a build from a checkout gets
        here (an sdist holds the files already)."""
        npm = shutil.which("npm")
        if npm is None:
            raise RuntimeError(
                "GraphiQL's files are not installed and npm is not found: install npm "
                "(Node.js) and run `make graphiql`, or build from an sdist, which holds them"
            )
        self.app.display_info(f"npm ci in {npm_dir} (GraphiQL's files)")
        subprocess.run([npm, "ci"], cwd=npm_dir, check=True)
