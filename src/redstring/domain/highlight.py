"""`highlight_ranges`: where in a text a query matched, for a search box to mark
(docs/adr/0012).

The score compares normalised forms, so a client cannot find the query in the text
by itself. Words are marked, read as the score reads them (`traced_forms`,
`folded_words`: case, accents, Latin letters in ASCII, other scripts romanised,
`&` groups joined). A text word is marked where a query word

- equals it, or spells it and the words after it without their spaces or
  punctuation (`cocacola` marks `Coca-Cola`);
- begins it, whatever its length: only the beginning is marked (`acme` marks `Acme`
  of `Acmeson`, `a` the `A` of `Ada`);
- is one edit from it (a letter deleted, inserted, replaced, or two swapped), both
  of `MIN_TYPO_LENGTH - 1` letters or more, and it does not begin the text word
  (`Holdngs` marks `Holdings`), or as alike as the score counts a word matched (an
  Indel ratio of `TOKEN_FLOOR` or more), both of `MIN_LIKE_LENGTH` letters or more
  (`Minitonka` marks `Minnetonka`); or, being the query's unfinished last word
  (`query_prefix`) of `MIN_TYPO_LENGTH` letters or more, is one edit from its
  beginning (`glasw` marks `Glassw` of `Glasswing`);
- is the same word abbreviated or written out (`ABBREVIATIONS`: `Corp` for
  `Corporation`, `Saint` for `St`), or begins with it, the text word being no legal
  form, title or stopword and long enough to begin a word (`may_begin_a_word`:
  `Intl` for `International`, not `The` for `Thermo`);
- stands inside it, or it inside the query word, both Han or kana words of two
  characters or more, as such names are written unspaced: only the part of the text
  word the query word is, or the whole of a text word inside it, is marked (`控股`
  marks `控股` of `腾讯控股有限公司`);

where consecutive query words spell it or its beginning (`mac donald` marks
`MacDonald`). When the query is the text's initials (`query_initials`,
`name_initials`), the first letter of each identifying word is marked, and no word's
beginning: `GE` marks `[G]eneral [E]lectric`, not the `Ge` it also begins. A marked
letter marks the character it folds from, whole (`stras` marks `Straß` of `Straße`:
`ß` folds to `ss`), and the combining marks after it. Nothing else is: a text the score matched
more loosely gets no range. Only the first `MAX_NAME_LENGTH` characters are read,
as the score reads them, and the first `MAX_QUERY_WORDS` words of each form of the
query.
"""

from __future__ import annotations

import bisect
import itertools
import unicodedata
from collections import defaultdict
from collections.abc import Iterator, Sequence
from typing import NamedTuple

import numpy as np
from rapidfuzz import fuzz, process
from rapidfuzz.distance import OSA

from redstring.domain.blocking import (
    MIN_TYPO_LENGTH,
    is_unspaced_word,
    may_begin_a_word,
    name_initials,
    query_initials,
    query_prefix,
)
from redstring.domain.errors import InvalidInputError
from redstring.domain.name_forms import ABBREVIATIONS, NON_IDENTIFYING
from redstring.domain.normalization import (
    FoldedWord,
    ampersand_joined,
    folded_words,
    name_tokens,
    other_forms,
    traced_forms,
)
from redstring.domain.similarity import MAX_QUERY_WORDS, TOKEN_FLOOR
from redstring.domain.text import MAX_NAME_LENGTH

# The shortest words a one-edit typo is marked between, as blocking finds them.
_MIN_TYPO_WORD = MIN_TYPO_LENGTH - 1
# The shortest words marked for being as alike as the score counts a match: from six
# letters, that likeness is two or three edits in a word a reader still sees as the
# one typed (`Baniyachong`, `Baniachang`); in shorter words it is one edit, or two
# words that merely look alike.
MIN_LIKE_LENGTH = 6

# The most pairs of a text word and a query word one call compares, over every form of
# both: what a crafted text of hundreds of one-letter words and a query of dozens of
# words could make hundreds of thousands of steps (tens of ms a match). A name and a
# query a person types compare a few dozen pairs; past the budget, what is marked so
# far is the answer.
MAX_COMPARED_PAIRS = 4096


class TextRange(NamedTuple):
    """A part of a text, from `start` up to (not including) `end`: `text[start:end]`."""

    start: int
    end: int

    def in_utf16(self, text: str) -> TextRange:
        """The same part in UTF-16 code units, how JavaScript indexes strings: a
        character outside the Basic Multilingual Plane (an emoji, a rare Han character)
        counts two."""
        return TextRange(_utf16_length(text[: self.start]), _utf16_length(text[: self.end]))


def _utf16_length(text: str) -> int:
    return len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)


def highlight_ranges(query: str, text: str | None) -> list[TextRange]:
    """The parts of `text` that `query` matched (see the module docstring for the
    rules), as indexes of `text` (code points), sorted, neither overlapping nor
    touching; `[]` when no word can be pointed at, or `text` is None (a match's
    `matched_text` where only the semantic channel ranked it). `InvalidInputError`
    when `query` or `text` is of another type."""
    if not isinstance(query, str):
        raise InvalidInputError(f"query must be a string, got {type(query).__name__}")
    if text is None:
        return []
    if not isinstance(text, str):
        raise InvalidInputError(f"text must be a string or None, got {type(text).__name__}")
    text = text[:MAX_NAME_LENGTH]
    marked: list[TextRange] = []
    query_forms = _query_forms(query)
    unfinished = _unfinished_word(query)
    budget = _Budget(MAX_COMPARED_PAIRS)
    whole: set[TextRange] = set()
    for form in traced_forms(text):
        folded = folded_words(form)
        whole.update(_span(word.origins) for word in folded)
        for query_words in query_forms:
            marked += _marked(query_words, _Words(folded), unfinished, budget)
    initials = _initials(query, text)
    if initials:
        # Read as the text's initials, the query is no word's beginning (`GE` marks
        # `[G]eneral [E]lectric`, not `Ge` too); a word it is whole stays marked.
        marked = [part for part in marked if part in whole] + initials
    return _merged(text, marked)


class _Budget:
    """How many more word pairs `highlight_ranges` may compare (`MAX_COMPARED_PAIRS`)."""

    def __init__(self, pairs: int) -> None:
        self.left = pairs

    def spend(self, pairs: int) -> bool:
        """Whether `pairs` more may be compared, counting them when they may."""
        if pairs > self.left:
            self.left = 0
            return False
        self.left -= pairs
        return True


class _Words:
    """A form's folded words, and their letters joined (`joined`, each word from
    `starts[i]`): a query word spells words `i` on (whole, the last perhaps begun)
    exactly when `joined` holds it at `starts[i]`, one comparison of strings."""

    def __init__(self, words: Sequence[FoldedWord]) -> None:
        self.words = words
        self.joined = "".join(word.text for word in words)
        self.starts = list(itertools.accumulate((len(word.text) for word in words), initial=0))

    def __len__(self) -> int:
        return len(self.words)


def _query_forms(query: str) -> list[list[str]]:
    """The words of each form of the query the score compares, the first
    `MAX_QUERY_WORDS` of each: the query (read joined where it has `&` groups: `AT&T`
    is `att`, not `at` and `t`), and its romanised form."""
    joined = ampersand_joined(query)
    forms = [joined if joined is not None else query]
    forms += [form for form in other_forms(query) if form != joined]
    return [name_tokens(form)[:MAX_QUERY_WORDS] for form in forms]


def _unfinished_word(query: str) -> str | None:
    """The query's last word when it may be unfinished (`query_prefix`) and long enough
    to be read as a mistyped beginning."""
    prefix = query_prefix(query)
    if prefix is None:
        return None
    word = prefix.removeprefix("w:")
    return word if len(word) >= MIN_TYPO_LENGTH else None


def _marked(
    query_words: Sequence[str], form: _Words, unfinished: str | None, budget: _Budget
) -> Iterator[TextRange]:
    """The ranges query words mark in one form of the text, each from the first
    character a marked letter folds from to the last; none past the `budget`."""
    distinct = list(dict.fromkeys(query_words))
    # A word a query word spells or begins, or that begins a query word, shares its
    # first letter: only those query words are walked.
    by_letter: dict[str, list[str]] = defaultdict(list)
    for query_word in distinct:
        by_letter[query_word[0]].append(query_word)
    canonical = {ABBREVIATIONS.get(query_word, query_word) for query_word in distinct}
    unspaced = [w for w in distinct if is_unspaced_word(w)]
    words = form.words
    typos = _one_edit_apart([word.text for word in words], distinct)
    for start, word in enumerate(words):
        sharing = by_letter.get(word.text[0], ())
        if not budget.spend(len(sharing) + len(query_words) + len(unspaced)):
            return
        if unspaced:
            yield from _inside(unspaced, word)
        alike = start in typos or ABBREVIATIONS.get(word.text, word.text) in canonical
        for query_word in sharing:
            spelled = _spelled(query_word, form, start)
            if spelled is not None:
                yield spelled
            alike = alike or _begins(word.text, query_word)
        if alike:
            yield _span(word.origins)
            continue
        typed = _typed_together(query_words, word.text)
        if unfinished is not None:
            typed = max(typed, _mistyped_beginning(unfinished, word.text))
        if typed:
            yield _span(word.origins[:typed])


def _spelled(query_word: str, form: _Words, start: int) -> TextRange | None:
    """What `query_word` marks when it spells `words[start]`, whole or its beginning,
    or it and the words after it (their beginning for the last)."""
    at = form.starts[start]
    if not form.joined.startswith(query_word, at):
        return None
    end = at + len(query_word)  # the letter after the last spelled, in `joined`
    last = bisect.bisect_left(form.starts, end) - 1  # the word holding that last letter
    origins = form.words[last].origins[: end - form.starts[last]]
    return TextRange(form.words[start].origins[0], origins[-1] + 1)


def _inside(query_words: Sequence[str], word: FoldedWord) -> Iterator[TextRange]:
    """What Han or kana `query_words` mark of such a `word` they stand inside, or that
    stands inside one of them: the part each is, the whole word."""
    text = word.text
    if not is_unspaced_word(text):
        return
    for query_word in query_words:
        if text != query_word and text in query_word:
            yield _span(word.origins)
        at = text.find(query_word, 1)
        while at != -1:
            yield _span(word.origins[at : at + len(query_word)])
            at = text.find(query_word, at + 1)


def _begins(word: str, query_word: str) -> bool:
    """Whether the text's `word` begins `query_word` and may be read as its beginning
    (`may_begin_a_word`: `Intl` of `International`), not being a word that says what
    kind of name it is (`The` of `Thermo`)."""
    return (
        len(word) < len(query_word)
        and query_word.startswith(word)
        and may_begin_a_word(word)
        and word not in NON_IDENTIFYING
    )


def _one_edit_apart(words: Sequence[str], query_words: Sequence[str]) -> set[int]:
    """The indexes of the `words` one edit from a query word, both of `_MIN_TYPO_WORD`
    letters or more: a letter deleted, inserted or replaced, or two swapped; or as alike
    as the score counts a match (`TOKEN_FLOOR`), both of `MIN_LIKE_LENGTH` letters or
    more. Not a word the query word begins (`acme` marks `Acme` of `Acmes`, not all of
    it)."""
    long_words = [i for i, word in enumerate(words) if len(word) >= _MIN_TYPO_WORD]
    long_query = [word for word in query_words if len(word) >= _MIN_TYPO_WORD]
    if not long_words or not long_query:
        return set()
    texts = [words[i] for i in long_words]
    distances = process.cdist(texts, long_query, scorer=OSA.distance, score_cutoff=1)
    likeness = process.cdist(texts, long_query, scorer=fuzz.ratio, score_cutoff=100 * TOKEN_FLOOR)
    text_long = np.asarray([len(w) >= MIN_LIKE_LENGTH for w in texts])[:, None]
    long_enough = text_long & np.asarray([len(w) >= MIN_LIKE_LENGTH for w in long_query])
    alike = (distances <= 1) | ((likeness >= 100 * TOKEN_FLOOR) & long_enough)
    return {
        long_words[row]
        for row, column in zip(*np.nonzero(alike), strict=True)
        if not words[long_words[row]].startswith(long_query[column])
    }


def _typed_together(query_words: Sequence[str], word: str) -> int:
    """How many letters of `word` two or more consecutive query words spell (the last
    ending in `word` or at its end), the most of any run; 0 when no run does."""
    longest = 0
    for first in range(len(query_words) - 1):
        if not word.startswith(query_words[first]):
            continue
        typed = query_words[first]
        for query_word in query_words[first + 1 :]:
            typed += query_word
            if not word.startswith(typed):
                break
            longest = max(longest, len(typed))
    return longest


def _mistyped_beginning(unfinished: str, word: str) -> int:
    """How many letters of `word` begin it one edit from `unfinished` (the longest such
    beginning), when it does not begin with `unfinished` itself; 0 when none does (a
    whole word one edit away is a typo of it, `_one_edit_apart`)."""
    if word.startswith(unfinished):
        return 0
    for length in (len(unfinished) + 1, len(unfinished), len(unfinished) - 1):
        if length < len(word) and OSA.distance(unfinished, word[:length], score_cutoff=1) <= 1:
            return length
    return 0


def _initials(query: str, text: str) -> list[TextRange]:
    """The first character of each identifying word of `text`, when `query` is its
    initials."""
    initials = query_initials(query)
    if initials is None or name_initials(text) != initials:
        return []
    [form, *_] = traced_forms(text)
    return [
        _span(word.origins[:1]) for word in folded_words(form) if word.text not in NON_IDENTIFYING
    ]


def _span(origins: Sequence[int]) -> TextRange:
    return TextRange(origins[0], origins[-1] + 1)


def _merged(text: str, ranges: list[TextRange]) -> list[TextRange]:
    """`ranges` each stretched over the combining marks that follow it, then sorted,
    overlapping or touching ones made one."""
    merged: list[TextRange] = []
    for start, end in sorted(ranges):
        while end < len(text) and unicodedata.category(text[end]).startswith("M"):
            end += 1
        if merged and start <= merged[-1].end:
            end = max(end, merged[-1].end)
            merged[-1] = TextRange(merged[-1].start, end)
        else:
            merged.append(TextRange(start, end))
    return merged
