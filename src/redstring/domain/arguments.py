"""The rule for the arguments of public entry points that are not ids (ids: `ids.py`).

A wrong-typed count, name list or choice is an `InvalidInputError` naming the
argument, so that a caller's slip is never a bare `TypeError`, a stray
`AttributeError`, nor, worse, a silently wrong answer: a string of types read
letter by letter (`entity_types="company"` finds nothing), a negative cap
slicing off the last item, or a direction of the wrong case read as `BOTH`.
"""

from __future__ import annotations

import math
import numbers
import operator
from collections.abc import Iterable, Sequence
from enum import Enum
from typing import SupportsIndex, TypeVar

from redstring.domain.errors import InvalidInputError
from redstring.domain.text import check_storable

E = TypeVar("E", bound=Enum)
T = TypeVar("T")


def _a(name: str) -> str:
    return f"an {name}" if name[:1].lower() in "aeiou" else f"a {name}"


def shown_value(value: object) -> str:
    """`value` as an error message shows it: its repr, or its type when the repr is long
    (a message names the mistake; it does not echo a whole payload)."""
    shown = repr(value)
    return shown if len(shown) <= 60 else _a(type(value).__name__)


# The largest count a store is asked for: Neo4j's integers are 64-bit signed, and its
# driver cannot send a larger one (an `OverflowError`), where memory would answer.
MAX_COUNT = 2**63 - 1


def count_of(value: object, argument: str) -> int:
    """`value`, an integer from 0 to `MAX_COUNT`, as an `int`, else `InvalidInputError`.

    An integer is what `operator.index` takes (an `int`, numpy's integers), but a `bool`:
    never a float, nor a string of digits. A larger one is refused rather than clamped,
    alike on every store: no store holds so many of anything, so a caller asking for
    more has made a slip worth naming."""
    try:
        if isinstance(value, bool) or not isinstance(value, SupportsIndex):
            raise TypeError
        value = operator.index(value)  # may refuse all the same (a numpy array of one)
    except TypeError:
        raise InvalidInputError(
            f"{argument} must be an integer, got {shown_value(value)}"
        ) from None
    if value < 0:
        raise InvalidInputError(f"{argument} must not be negative, got {value}")
    if value > MAX_COUNT:
        raise InvalidInputError(f"{argument} must be at most 2**63 - 1, got {shown_value(value)}")
    return value


# The longest wait, in seconds, a setting or an argument of seconds takes (about 31
# years): any longer is a slip, and some cannot be used at all. The Neo4j driver sends a
# transaction timeout as 64-bit milliseconds (9.2e15 s, else an `OverflowError`), and
# Python's own waits on a lock or a socket take at most 64-bit nanoseconds (9.2e9 s).
MAX_SECONDS = 1e9


def seconds_of(value: object, argument: str, *, zero: bool = True) -> float:
    """`value`, a finite number of seconds up to `MAX_SECONDS`, 0 or more (more than 0
    unless `zero`), as a `float`; else `InvalidInputError` naming `argument`.

    A number is any real one (`numbers.Real`: an `int`, a `float`, numpy's integers and
    floats, a `Fraction`), but a `bool`: never a string nor a `Decimal`. It is compared
    as it is, made a float only once in range (`float` overflows on `10**400`)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise InvalidInputError(f"{argument} must be a number of seconds, got {shown_value(value)}")
    if isinstance(value, numbers.Integral):
        value = int(value)  # exact, however large
    elif value != value or abs(value) == math.inf:  # NaN or infinite, without a `float()`
        raise InvalidInputError(f"{argument} must be finite, got {value}")
    if not value <= MAX_SECONDS:  # compared exactly, however large (`Real` has no `>`)
        raise InvalidInputError(
            f"{argument} must be at most {MAX_SECONDS:g} seconds (about 31 years), "
            f"got {shown_value(value)}"
        )
    if value < 0 and zero:
        raise InvalidInputError(f"{argument} must not be negative, got {value}")
    if value <= 0 and not zero:
        raise InvalidInputError(f"{argument} must be more than 0 seconds, got {value}")
    return float(value)


def positive_count_of(value: object, argument: str) -> int:
    """`count_of`, and 1 or more (a vector's `dimension`)."""
    count = count_of(value, argument)
    if count < 1:
        raise InvalidInputError(f"{argument} must be at least 1, got {count}")
    return count


def page_size_of(value: object, argument: str = "limit") -> int:
    """`positive_count_of`: a page of none would never move a paged read on."""
    return positive_count_of(value, argument)


def optional_count_of(value: object, argument: str) -> int | None:
    """None as it is, else `count_of`."""
    return None if value is None else count_of(value, argument)


def storable_of(value: object, argument: str) -> str:
    """`value`, a string a store can hold (no NUL, no lone surrogate: `check_storable`),
    as it is; else `InvalidInputError` naming `argument`."""
    if not isinstance(value, str):
        raise InvalidInputError(f"{argument} must be a string, got {shown_value(value)}")
    try:
        return check_storable(value, argument)
    except ValueError as error:
        raise InvalidInputError(str(error)) from None


def names_of(values: object, argument: str) -> list[str] | None:
    """None (no filter) as it is; any other iterable of strings as a list, in its order,
    each stripped of surrounding whitespace as stored types are (`check_nonblank`).

    A string is refused rather than read as its letters, and so is anything whose
    items are not strings, or an item no stored type can equal: a blank one, or one
    holding a NUL or a lone surrogate (`check_storable`), which some stores cannot even
    be asked about. An item longer than a type may now be (`MAX_TYPE_LENGTH`) is kept:
    a store written before the cap may hold such a type, and a filter naming one finds
    what it names, nothing when the store holds none.
    """
    if values is None:
        return None
    if isinstance(values, str | bytes) or not isinstance(values, Iterable):
        raise InvalidInputError(f"{argument} must be a list of strings, got {shown_value(values)}")
    names = list(values)
    for i, name in enumerate(names):
        names[i] = storable_of(name, f"{argument}[{i}]").strip()
        if not names[i]:
            raise InvalidInputError(f"{argument}[{i}] must not be blank")
    return names


def choice_of(value: object, choices: type[E], argument: str) -> E:
    """`value` as a member of `choices`: a member as it is, a string by its value or its
    name in any case (`"out"`, `"OUT"`), else `InvalidInputError` listing the choices."""
    if isinstance(value, choices):
        return value
    if isinstance(value, str):
        wanted = value.casefold()
        for member in choices:
            if wanted in (str(member.value).casefold(), member.name.casefold()):
                return member
    names = ", ".join(member.name for member in choices)
    raise InvalidInputError(f"{argument} must be one of {names}, got {shown_value(value)}")


def items_of(values: object, kind: type[T], argument: str) -> Sequence[T]:
    """`values`, a sequence of `kind` (not one `kind` alone, nor a string), as it is."""
    if isinstance(values, str | bytes | kind) or not isinstance(values, Sequence):
        raise InvalidInputError(
            f"{argument} must be a sequence of {kind.__name__}, got {shown_value(values)}"
        )
    for i, value in enumerate(values):
        if not isinstance(value, kind):
            raise InvalidInputError(
                f"{argument}[{i}] must be {_a(kind.__name__)}, got {shown_value(value)}"
            )
    return values
