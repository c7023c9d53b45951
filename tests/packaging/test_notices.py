"""`notices`: the licence texts of every package GraphiQL's `npm ci` installs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from redstring.api.graphiql.assets import notices


def _install(root: Path, packages: dict[str, dict[str, Any]], files: dict[str, str]) -> Path:
    """The install folder of a lock file listing `packages` (by location), with the
    `files` (by path) installed."""
    (root / "package-lock.json").write_text(
        json.dumps({"packages": {"": {"name": "root"}, **packages}})
    )
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    return root / "node_modules"


def test_every_installed_package_is_listed_with_its_licence_texts(tmp_path: Path) -> None:
    install_dir = _install(
        tmp_path,
        {
            "node_modules/graphql": {"version": "16.9.0", "license": "MIT"},
            "node_modules/@scope/nested": {"version": "1.0.0", "license": "0BSD"},
            "node_modules/a/node_modules/b": {"version": "2.0.0", "license": "BSD-2-Clause"},
            "node_modules/bare": {"version": "3.0.0", "license": "MIT"},
            "node_modules/typescript": {"version": "5.0.0", "dev": True},
            "node_modules/fsevents": {"version": "2.3.3", "optional": True},
        },
        {
            "node_modules/graphql/LICENSE": "MIT text of graphql\n",
            "node_modules/graphql/index.js": "LICENSE in a file that is no licence",
            "node_modules/@scope/nested/licence.md": "0BSD text\n",
            "node_modules/@scope/nested/NOTICE": "a notice\n",
            "node_modules/a/node_modules/b/COPYING": "BSD text\n",
            "node_modules/bare/package.json": json.dumps(
                {"author": {"name": "Ann", "email": "a@b"}}
            ),
            "node_modules/typescript/LICENSE.txt": "dev only",
        },
    )
    text = notices(install_dir)

    assert "the 4 npm packages" in text
    for heading in (
        "graphql 16.9.0 (MIT)",
        "@scope/nested 1.0.0 (0BSD)",
        "b 2.0.0 (BSD-2-Clause)",
        "bare 3.0.0 (MIT)",
    ):
        assert f"\n{heading}\n" in text
    for licence in ("MIT text of graphql", "0BSD text", "a notice", "BSD text"):
        assert f"\n{licence}\n" in text
    assert "no licence text; its package.json declares MIT, by Ann a@b." in text
    for absent in ("typescript", "dev only", "fsevents"):
        assert absent not in text
    assert "LICENSE in a file" not in text
    assert text.index("@scope/nested") < text.index("\nb 2.0.0") < text.index("graphql 16")


def test_a_required_package_not_installed_is_refused(tmp_path: Path) -> None:
    install_dir = _install(tmp_path, {"node_modules/graphql": {"version": "16.9.0"}}, {})
    with pytest.raises(FileNotFoundError, match="make graphiql"):
        notices(install_dir)
