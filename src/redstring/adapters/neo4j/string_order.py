"""Where Neo4j compares a stored string with a parameter as Python compares them.

Neo4j compares two strings by their UTF-8 bytes (code points, Python's order) when it
holds both so, as it does two strings read from the store, and otherwise by UTF-16 code
units, as it does a stored string and a parameter. The two orders part only where, at
the first character two strings differ in, one holds a character beyond U+FFFF (a
surrogate pair, U+D800 to U+DBFF first) and the other one from U+E000 to U+FFFF. A
parameter without a character from U+E000 up is therefore compared with every string
as Python compares them (a stored string holds no lone surrogate).
"""

from __future__ import annotations

# The first character from which a parameter's comparisons may part from Python's.
_FIRST_UNSAFE = "\ue000"


def server_bound(text: str) -> tuple[str, bool]:
    """A lower bound for a server's `> $bound` standing for Python's `> text`, and
    whether it is exact.

    `text` itself and True when the server compares it as Python does. Otherwise its
    beginning up to its first character from U+E000 up and False: every string after
    `text` in Python's order is after that beginning in both orders, so the server keeps
    all of them and some before `text` too, which the caller leaves out itself (the
    server's cut, a `LIMIT`, is then no cut of Python's order either)."""
    for index, character in enumerate(text):
        if character >= _FIRST_UNSAFE:
            return text[:index], False
    return text, True
