"""The public surface: what `from redstring import ...` gives, and the signature gate."""

from __future__ import annotations

import inspect
import typing
from collections.abc import Iterator

import redstring

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
