"""What text redstring can store: everything but NUL and lone surrogates.

Both are refused at the boundary because no store keeps them faithfully:
Neo4j and JSON reject lone surrogates, and NUL truncates in many drivers.
"""

from __future__ import annotations


def check_storable(text: str, what: str) -> str:
    """Return `text` unchanged, or raise `ValueError` naming `what` is wrong with it."""
    if "\x00" in text:
        raise ValueError(f"{what} contains a NUL character, which cannot be stored")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(
            f"{what} contains a lone surrogate at position {exc.start}, which cannot be stored"
        ) from None
    return text


def check_nonblank(text: str, what: str) -> str:
    """`text` stripped of surrounding whitespace; `ValueError` when nothing is left."""
    stripped = check_storable(text, what).strip()
    if not stripped:
        raise ValueError(f"{what} must not be blank")
    return stripped
