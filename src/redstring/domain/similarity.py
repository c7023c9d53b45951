"""`string_similarity`: the one measure of how alike two names are, on 0..1.

Symmetric; exactly 1.0 when the normalised names are equal and below 1.0
otherwise; high for a title-qualified name (`Lord Voldemort` / `Voldemort`)
and an abbreviated legal form (`ACME Corporation` / `Acme Corp`). Built from
rapidfuzz's Indel-based ratios, which are symmetric by construction.
`string_similarities` is the same function over many candidates at once.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import numpy as np
from numpy.typing import NDArray
from rapidfuzz import fuzz, process

from redstring.domain.name_forms import canonical_tokens
from redstring.domain.normalization import normalize_name

# Names equal once titles, stopwords and legal forms are read alike.
CANONICAL_MATCH = 0.95
# Credit for one name's words all standing in the other (`Acme` in `Acme Widgets`).
SUBSET_WEIGHT = 0.9
# Ceiling for names that differ, so that 1.0 keeps meaning "the same name".
BELOW_EXACT = 0.99


@lru_cache(maxsize=1 << 16)
def _canonical(normalized: str) -> str:
    return " ".join(canonical_tokens(normalized.split()))


def string_similarities(query: str, candidates: Sequence[str]) -> NDArray[np.float64]:
    """`string_similarity(query, c)` for every candidate `c`, computed in batches.

    Each distinct normalised candidate is scored once.
    """
    if not candidates:
        return np.zeros(0, dtype=np.float64)
    q = normalize_name(query)
    normalized = list(map(normalize_name, candidates))
    names = list(dict.fromkeys(normalized))
    position = {name: index for index, name in enumerate(names)}
    where = np.fromiter(map(position.__getitem__, normalized), dtype=np.intp, count=len(normalized))
    if not q:
        unique = np.array([1.0 if not n else 0.0 for n in names], dtype=np.float64)
        return unique[where]
    q_canon = _canonical(q)
    canon = [_canonical(n) for n in names]

    def batch(scorer: Any, left: str, right: list[str]) -> NDArray[np.float64]:
        scores = process.cdist([left], right, scorer=scorer, dtype=np.float64)[0]
        return np.asarray(scores, dtype=np.float64) / 100.0

    edit = np.maximum(batch(fuzz.ratio, q, names), batch(fuzz.token_sort_ratio, q, names))
    core = np.maximum(
        batch(fuzz.ratio, q_canon, canon),
        SUBSET_WEIGHT * batch(fuzz.token_set_ratio, q_canon, canon),
    )
    canon_equal = np.array([c == q_canon for c in canon], dtype=bool)
    score = np.maximum(edit, core)
    score = np.where(canon_equal, np.maximum(score, CANONICAL_MATCH), score)
    score = np.minimum(score, BELOW_EXACT)
    exact = np.array([n == q for n in names], dtype=bool)
    empty = np.array([not n for n in names], dtype=bool)
    unique = np.where(exact, 1.0, np.where(empty, 0.0, score))
    return unique[where]


def string_similarity(a: str, b: str) -> float:
    """How alike two names are, on 0..1 (see the module docstring for the contract)."""
    return float(string_similarities(a, [b])[0])
