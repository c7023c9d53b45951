"""What the semantic channel embeds of a text: at most `MAX_EMBEDDED_CHARACTERS`, cut
after a whole word, whichever provider embeds it."""

from __future__ import annotations

import re

from redstring.domain.normalization import with_romanised

# 2,048 characters are at most 8,192 bytes of UTF-8, so at most 8,192 tokens for a
# byte-level tokenizer (OpenAI's models refuse an input of more), in any script; and
# about 440 tokens of English prose for the static model, which reads 512 at most.
# Changing it changes the `vector_source` of longer texts (docs/embeddings.md).
MAX_EMBEDDED_CHARACTERS = 2048

# The text before the last white space within the cap, ending in a word: greedy, so the
# last such space (the one after the cap included, which keeps a word ending there).
_LAST_WORD_END = re.compile(r"(?s)(.*\S)\s")


def embedded_text(text: str) -> str:
    """`text` when it has at most `MAX_EMBEDDED_CHARACTERS` characters; else its beginning
    up to the end of its last word within them (white space after it dropped), or its
    first `MAX_EMBEDDED_CHARACTERS` characters when no word ends in their second half
    (a long word, a script written without spaces, as Chinese is): a cut after a word
    would leave out more than it keeps of the text beyond that word."""
    if len(text) <= MAX_EMBEDDED_CHARACTERS:
        return text
    head = text[: MAX_EMBEDDED_CHARACTERS + 1]
    words = _LAST_WORD_END.match(head)
    if words is None or len(words[1]) <= MAX_EMBEDDED_CHARACTERS // 2:
        return head[:MAX_EMBEDDED_CHARACTERS]
    return words[1]


def query_embedding_text(query: str) -> str:
    """What the semantic channel embeds of a query: `with_romanised(query)` (a name in
    Cyrillic followed by its Latin form), as `embedded_text` cuts it."""
    return embedded_text(with_romanised(query))
