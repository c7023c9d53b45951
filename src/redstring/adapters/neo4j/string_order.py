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
# The last character below it and below every UTF-16 unit of a character beyond U+FFFF.
_LAST_SAFE = "\ud7ff"


def server_bound(text: str) -> tuple[str, bool]:
    """A lower bound for a server's `> $bound` standing for Python's `> text`, and
    whether it is exact.

    `text` itself and True when the server compares it as Python does. Otherwise, with
    `i` the index of its first character from U+E000 up, `text[:i] + "\\ud7ff"` and
    False: that bound holds no such character, so the server compares it as Python
    does, and every string after `text` in Python's order holds, after `text[:i]`, a
    character from U+E000 up (a surrogate pair from U+D800 in UTF-16), above U+D7FF in
    both orders. The server keeps all of them and leaves out every string whose
    character at `i` is below U+D7FF (all ASCII types after `text[:i]`); it keeps some
    before `text` too, which the caller leaves out itself (the server's cut, a
    `LIMIT`, is then no cut of Python's order either)."""
    for index, character in enumerate(text):
        if character >= _FIRST_UNSAFE:
            return text[:index] + _LAST_SAFE, False
    return text, True
