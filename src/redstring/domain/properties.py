"""Entity and relationship properties: a read-only map of storable values.

Values are what every store keeps natively (Neo4j's property types): strings,
booleans, integers, finite floats, and homogeneous-enough lists of them, held
as tuples. The map is frozen so that a result handed to a caller cannot be
changed behind a store's back.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from types import MappingProxyType
from typing import Annotated, TypeAlias

from pydantic import AfterValidator, PlainSerializer, StrictBool, StrictFloat, StrictInt, StrictStr

from redstring.domain.text import check_storable

PropertyScalar: TypeAlias = StrictBool | StrictInt | StrictFloat | StrictStr
PropertyValue: TypeAlias = PropertyScalar | tuple[PropertyScalar, ...]


def _check_value(key: str, value: object) -> None:
    if isinstance(value, str):
        check_storable(value, f"property {key!r}")
    elif isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"property {key!r} must be a finite number")


def freeze_properties(raw: Mapping[str, PropertyValue]) -> Mapping[str, PropertyValue]:
    """Checked, read-only copy of `raw`."""
    checked: dict[str, PropertyValue] = {}
    for key, value in raw.items():
        if not key.strip():
            raise ValueError("property names must not be blank")
        check_storable(key, "property name")
        for item in value if isinstance(value, tuple) else (value,):
            _check_value(key, item)
        checked[key] = value
    return MappingProxyType(checked)


def string_values(properties: Mapping[str, PropertyValue]) -> list[str]:
    """Every string value of `properties`, list items included, in order."""
    out: list[str] = []
    for value in properties.values():
        items: tuple[PropertyValue, ...] = value if isinstance(value, tuple) else (value,)
        out.extend(v for v in items if isinstance(v, str))
    return out


def thaw_properties(frozen: Mapping[str, PropertyValue]) -> dict[str, object]:
    """A plain, JSON-ready dict (tuples become lists)."""
    return {k: list(v) if isinstance(v, tuple) else v for k, v in frozen.items()}


Properties = Annotated[
    Mapping[str, PropertyValue],
    AfterValidator(freeze_properties),
    PlainSerializer(thaw_properties),
]
