"""Blocking keys: the cheap keys under which lexical candidates are looked up.

An entity carries `p:` (first 5 characters of its normalised name), `s:`
(soundex of its ASCII letters), `w:` (one per identifying word) and `t:` (its
type). A query asks for `p:`, `s:` and `w:` keys, never `t:`: every entity
of a type carries that key, so it would turn candidate generation into a scan.
Why `w:` exists and how its blocks are bounded: docs/adr/0003.
"""

from __future__ import annotations

import jellyfish

from redstring.domain.name_forms import identifying_tokens
from redstring.domain.normalization import ascii_letters, name_tokens, normalize_name

PREFIX_LENGTH = 5
# The prefix of the one key a query never asks for (its block is a whole type).
TYPE_KEY_PREFIX = "t:"
# Per-key cap on candidates read by one lexical lookup (docs/adr/0003).
MAX_BLOCK_SIZE = 500
_MIN_TOKEN_LENGTH = 2


def _name_keys(name: str) -> list[str]:
    keys: list[str] = []
    normalized = normalize_name(name)
    if normalized:
        keys.append("p:" + normalized[:PREFIX_LENGTH].rstrip())
    letters = ascii_letters(name)
    if letters:
        keys.append("s:" + jellyfish.soundex(letters))
    for token in identifying_tokens(name_tokens(name)):
        if len(token) >= _MIN_TOKEN_LENGTH:
            keys.append("w:" + token)
    return keys


def _unique(keys: list[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(keys))


def blocking_keys_for(name: str, entity_type: str) -> tuple[str, ...]:
    """Every key an entity is indexed under, in a stable order without repeats."""
    return _unique([*_name_keys(name), TYPE_KEY_PREFIX + normalize_name(entity_type)])


def lookup_keys(keys: tuple[str, ...]) -> tuple[str, ...]:
    """Those of an entity's `keys` that a query can ask for: all but its type key.

    A store may index only these (the Neo4j graph store does: a type key's
    block would hold every entity of the type and no query reads it)."""
    return tuple(k for k in keys if not k.startswith(TYPE_KEY_PREFIX))


def query_blocking_keys(query: str) -> tuple[str, ...]:
    """The keys a query looks up: the entity keys of its text, minus the type key."""
    return _unique(_name_keys(query))
