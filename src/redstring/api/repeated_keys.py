"""A JSON object may give each key once: one given twice is refused, where `json` and
pydantic keep its last value without a word and another reader (a proxy, a log, the
tool that wrote it) may have taken the first. The rule of `redstring load`'s lines
(`redstring.api.jsonl`) and of a request's JSON (`redstring.api.request_body`)."""

from __future__ import annotations

import json
from typing import Any


class RepeatedKeyError(ValueError):
    """A key given twice in one JSON object; `str()` says which."""

    def __init__(self, key: str) -> None:
        super().__init__(f"the key {json.dumps(key)} is given twice in one object")
        self.key = key


def unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object's pairs as a dict, or `RepeatedKeyError` for its first key given
    twice: `json`'s `object_pairs_hook`."""
    fields = dict(pairs)
    if len(fields) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise RepeatedKeyError(key)
            seen.add(key)
    return fields


UNIQUE_KEYS = json.JSONDecoder(object_pairs_hook=unique_keys)
