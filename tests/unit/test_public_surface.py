"""The public surface: what `from redstring import ...` gives, and the signature gate."""

from __future__ import annotations

import inspect
import subprocess
import sys
import typing
from collections.abc import Iterator

import pytest

import redstring
import redstring.api
from tests.processes import child_environment

REQUIRED = {
    "EntityId", "RelationshipId", "TenantId", "Entity", "Relationship", "Direction",
    "EmbeddingProvider", "VectorStore", "GraphStore", "VectorRecord", "VectorMatch",
    "InMemoryGraphStore", "InMemoryVectorStore", "HashingEmbeddingProvider", "build_graph",
    "Retriever", "RetrievalMode", "ScoredEntity", "RetrievalResult", "DimensionMismatchError",
}  # fmt: skip


def test_required_names_are_exported() -> None:
    assert set(redstring.__all__) >= REQUIRED
    for name in redstring.__all__:
        assert hasattr(redstring, name), name


@pytest.mark.parametrize("package", [redstring, redstring.api], ids=lambda p: p.__name__)
def test_each_exported_name_is_imported_on_use_and_no_other(package: object) -> None:
    names = set(package.__all__) - {"__version__"}  # type: ignore[attr-defined]
    assert set(package._HOMES) == names  # type: ignore[attr-defined]
    listed = {name for name in dir(package) if not name.startswith("__")}
    assert listed == names  # not the names `__init__` imports on use with
    with pytest.raises(AttributeError, match="has no attribute 'Nothing'"):
        package.Nothing  # type: ignore[attr-defined]  # noqa: B018


def test_the_entry_point_imports_nothing_of_redstring_but_signal_handling() -> None:
    """`redstring` and `redstring.api` import their names on first use, so that the
    command line's entry point runs before the rest (numpy, pydantic, the app) is
    imported: `serve` takes SIGTERM as a stop from there (tests/api/test_uvicorn.py)."""
    code = (
        "import sys, redstring.api.entry_point\n"
        "print(*sorted(m for m in sys.modules if m.startswith(('redstring', 'numpy', 'pydantic'))))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        env=child_environment(),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert done.stdout.split() == [
        "redstring",
        "redstring.api",
        "redstring.api.entry_point",
        "redstring.api.termination",
        "redstring.exports",
    ]


def _referenced(annotation: object) -> Iterator[object]:
    yield annotation
    supertype = getattr(annotation, "__supertype__", None)  # NewType
    if supertype is not None:
        yield from _referenced(supertype)
    for arg in typing.get_args(annotation):
        yield from _referenced(arg)


def _own_callables(obj: object) -> Iterator[object]:
    if inspect.isclass(obj):
        for name, member in vars(obj).items():
            if name.startswith("_") and name != "__init__":
                continue
            member = getattr(member, "fget", member)  # properties
            member = getattr(member, "__func__", member)  # class/static methods
            if inspect.isfunction(member):
                yield member
        yield obj  # field annotations of models and dataclasses
    elif callable(obj):
        yield obj


def _unexported_types_in(obj: object) -> set[str]:
    exported = {id(getattr(redstring, n)) for n in redstring.__all__}
    missing: set[str] = set()
    for function in _own_callables(obj):
        hints = typing.get_type_hints(function)
        for hint in hints.values():
            for ref in _referenced(hint):
                module = getattr(ref, "__module__", "") or ""
                if module.startswith("redstring") and id(ref) not in exported:
                    missing.add(f"{getattr(function, '__qualname__', function)} -> {ref!r}")
    return missing


def test_signature_gate() -> None:
    """An exported function or class must not name an unexported redstring type."""
    missing: set[str] = set()
    for name in redstring.__all__:
        obj = getattr(redstring, name)
        if inspect.isclass(obj) or inspect.isfunction(obj):
            missing |= _unexported_types_in(obj)
    assert not missing, sorted(missing)


def test_signature_gate_catches_an_unexported_type() -> None:
    from redstring.domain.name_forms import canonical_tokens  # noqa: F401  (sanity import)

    class _Hidden:
        pass

    _Hidden.__module__ = "redstring.hidden"

    def leaky(x: _Hidden) -> None: ...

    leaky.__annotations__ = {"x": _Hidden, "return": None}
    assert _unexported_types_in(leaky)


def test_every_error_is_one_class_wherever_it_is_imported_from() -> None:
    """The errors live in `redstring.domain.errors`; the top level and the adapter that
    raises one hand over that same class, so one `except` catches it either way."""
    from redstring.adapters import neo4j
    from redstring.adapters.neo4j import vector_store
    from redstring.domain import errors

    assert redstring.VectorIndexMismatchError is errors.VectorIndexMismatchError
    assert neo4j.VectorIndexMismatchError is errors.VectorIndexMismatchError
    assert "VectorIndexMismatchError" in neo4j.__all__
    assert vector_store.VectorIndexMismatchError is errors.VectorIndexMismatchError
    for name in redstring.__all__:
        exported = getattr(redstring, name)
        if isinstance(exported, type) and issubclass(exported, Exception):
            assert exported.__module__ == errors.__name__, name
            assert issubclass(exported, errors.RedstringError), name
