"""Names a package exports, each imported from its module on first use (PEP 562).

`redstring` and `redstring.api` import nothing when they are imported, so that a
module under them (the command line's entry point, `api/entry_point.py`) runs
before the second of imports the rest takes.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def imported_on_use(
    package: str, homes: Mapping[str, str], names: dict[str, Any]
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """The `__getattr__` and `__dir__` of `package`, whose globals are `names`: an
    exported name (a key of `homes`) is imported from its module (the value) when it is
    first asked for, and kept among `names`; any other raises `AttributeError`, so
    that `from package import submodule` imports the submodule."""

    def attribute(name: str) -> object:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home), name)
        names[name] = value
        return value

    def listing() -> list[str]:
        # What the package offers: its exports and a module's own attributes (`__doc__`,
        # ...), not the names its `__init__` uses to import on use.
        exported = names.get("__all__", homes)
        return sorted({*exported, *homes, *(name for name in names if name.startswith("__"))})

    return attribute, listing
