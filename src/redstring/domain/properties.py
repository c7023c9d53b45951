"""Entity and relationship properties: a read-only map of storable values.

Values are what every store keeps natively (Neo4j's property types): strings,
booleans, integers, finite floats, and homogeneous-enough lists of them, held
as tuples. The map is frozen so that a result handed to a caller cannot be
changed behind a store's back.
"""

from __future__ import annotations

import json
import math
from collections.abc import ItemsView, Iterator, KeysView, Mapping, ValuesView
from typing import Annotated, Any, TypeAlias

from pydantic import (
    AfterValidator,
    BeforeValidator,
    PlainSerializer,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
)

from redstring.domain.text import check_storable

PropertyScalar: TypeAlias = StrictBool | StrictInt | StrictFloat | StrictStr
PropertyValue: TypeAlias = PropertyScalar | tuple[PropertyScalar, ...]


def _check_value(key: str, value: object) -> None:
    if isinstance(value, str):
        check_storable(value, f"property {key!r}")
    elif isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"property {key!r} must be a finite number")


class FrozenProperties(Mapping[str, PropertyValue]):
    """A read-only map over a dict that no one else holds.

    Where `types.MappingProxyType` refuses `pickle`, this pickles as its items,
    so entities and relationships can cross a process boundary or go into a
    pickling cache. Reads go straight to the dict's own views."""

    __slots__ = ("_items",)

    def __init__(self, items: dict[str, PropertyValue]) -> None:
        self._items = items

    def __getitem__(self, key: str) -> PropertyValue:
        return self._items[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, key: object) -> bool:
        return key in self._items

    def keys(self) -> KeysView[str]:
        return self._items.keys()

    def values(self) -> ValuesView[PropertyValue]:
        return self._items.values()

    def items(self) -> ItemsView[str, PropertyValue]:
        return self._items.items()

    def get(self, key: str, default: Any = None) -> Any:
        return self._items.get(key, default)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, FrozenProperties):
            return self._items == other._items
        if isinstance(other, Mapping):
            return self._items == dict(other.items())
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # equal to dicts, which do not hash

    def __repr__(self) -> str:
        return f"FrozenProperties({self._items!r})"

    def __reduce__(self) -> tuple[type[FrozenProperties], tuple[dict[str, PropertyValue]]]:
        return (FrozenProperties, (dict(self._items),))


NO_PROPERTIES = FrozenProperties({})


def no_properties() -> FrozenProperties:
    """The default of a `properties` field: one shared empty map, read-only like the rest."""
    return NO_PROPERTIES


def freeze_properties(raw: Mapping[str, PropertyValue]) -> Mapping[str, PropertyValue]:
    """Checked, read-only copy of `raw`, its keys in code point order: the order a store
    of JSON (Neo4j's, sorted keys) gives back, so that every store reads an entity's
    values, which the lexical score compares up to a cap, in one order."""
    checked: dict[str, PropertyValue] = {}
    for key, value in sorted(raw.items()):
        if not key.strip():
            raise ValueError("property names must not be blank")
        check_storable(key, "property name")
        for item in value if isinstance(value, tuple) else (value,):
            _check_value(key, item)
        checked[key] = value
    return FrozenProperties(checked) if checked else NO_PROPERTIES


# The property that holds an entity's other names (a string, or a list of strings):
# indexed under the same blocking keys as its name (`blocking_keys_for`).
ALIASES = "aliases"


def alias_names(properties: object) -> list[str]:
    """The strings of `properties[ALIASES]` (one string, or a list's string items), in
    order; none when `properties` is not a mapping or holds no such value. Reads raw
    input too: whatever else is there is the properties validator's to refuse."""
    if not isinstance(properties, Mapping):
        return []
    value = properties.get(ALIASES)
    if isinstance(value, str):
        return [value]
    if isinstance(value, list | tuple):
        return [item for item in value if isinstance(item, str)]
    return []


def string_values(properties: Mapping[str, PropertyValue]) -> list[str]:
    """Every string value of `properties`, list items included, in order."""
    out: list[str] = []
    for value in properties.values():
        items: tuple[PropertyValue, ...] = value if isinstance(value, tuple) else (value,)
        out.extend(v for v in items if isinstance(v, str))
    return out


# What an entity's or a relationship's properties may hold, as the UTF-8 bytes of their
# JSON: a store reads them whole with every entity a query reads (a few hundred lexical
# candidates a query, on Neo4j one JSON string each), so that unbounded, one writer's
# entities of a megabyte each made every query of their tenant take seconds of the
# serving process (100 of them: 2.5 s a LEXICAL retrieve against 10 ms). Properties are
# attributes that say which entity it is; a long text is its description.
MAX_PROPERTIES_BYTES = 16_384


def check_properties_size(properties: Mapping[str, PropertyValue]) -> Mapping[str, PropertyValue]:
    """`properties` as they are, or `ValueError` when their JSON (`properties_size`) is
    longer than `MAX_PROPERTIES_BYTES`. Checked where a record is made (`Properties`
    validates it), not where a store reads one back (built without validation): what an
    earlier version stored is still read."""
    if properties:
        size = properties_size(properties)
        if size > MAX_PROPERTIES_BYTES:
            raise ValueError(
                f"properties must be at most {MAX_PROPERTIES_BYTES:,} bytes as JSON, got "
                f"{size:,}: a long text belongs in the description"
            )
    return properties


def properties_size(properties: Mapping[str, PropertyValue]) -> int:
    """The UTF-8 bytes of `properties` written as compact JSON."""
    written = json.dumps(thaw_properties(properties), ensure_ascii=False, separators=(",", ":"))
    return len(written.encode("utf-8"))


def thaw_properties(frozen: Mapping[str, PropertyValue]) -> dict[str, object]:
    """A plain, JSON-ready dict (tuples become lists)."""
    return {k: list(v) if isinstance(v, tuple) else v for k, v in frozen.items()}


def plain_values(raw: object) -> object:
    """`raw` as it is, or `ValueError` naming the first property whose value is no
    string, number or boolean, nor a flat list of them (a map, a nested list, null):
    said once, where pydantic would list each member of the value union it tried."""
    if isinstance(raw, Mapping):
        for key, value in raw.items():
            items = value if isinstance(value, list | tuple) else (value,)
            if not all(isinstance(item, str | int | float) for item in items):
                raise ValueError(
                    f"property {key!r} must be a string, number, boolean or a list of them"
                )
    return raw


Properties = Annotated[
    Mapping[str, PropertyValue],
    BeforeValidator(plain_values),
    AfterValidator(freeze_properties),
    AfterValidator(check_properties_size),
    PlainSerializer(thaw_properties),
]
