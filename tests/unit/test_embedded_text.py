"""What is embedded of a text: its first `MAX_EMBEDDED_CHARACTERS`, cut after a word; a
text within them whole, so that its vector's source stays the one stored before."""

from __future__ import annotations

import uuid

import pytest

from redstring import Entity
from redstring.domain.embedded_text import (
    MAX_EMBEDDED_CHARACTERS,
    embedded_text,
    query_embedding_text,
)
from redstring.domain.vectors import vector_source
from redstring.testing import make_entity, new_tenant

CAP = MAX_EMBEDDED_CHARACTERS


def test_the_cap_is_what_a_model_of_8192_tokens_takes_in_any_script() -> None:
    """A byte-level tokenizer (OpenAI's) makes at most a token of each UTF-8 byte, and a
    character is at most 4 bytes (docs/embeddings.md, "How much of a text is embedded")."""
    assert CAP * 4 <= 8192


@pytest.mark.parametrize(
    "text",
    ["", "Acme", "a" * CAP, ("word " * CAP)[:CAP], "🚢" * CAP],
    ids=["empty", "short", "one word at the cap", "words to the cap", "emoji to the cap"],
)
def test_a_text_within_the_cap_is_embedded_whole(text: str) -> None:
    assert embedded_text(text) == text


def test_a_longer_text_is_cut_after_its_last_whole_word_within_the_cap() -> None:
    text = "ab " * CAP
    cut = embedded_text(text)
    assert len(cut) <= CAP
    assert text.startswith(cut)
    assert cut.endswith("ab")
    assert len(cut) > CAP - 3  # no whole word more fits


def test_a_word_ending_at_the_cap_is_kept_whole() -> None:
    text = "x" * (CAP - 5) + " word" + " more"
    assert embedded_text(text) == "x" * (CAP - 5) + " word"


def test_a_word_running_past_the_cap_is_left_out_and_the_spaces_before_it() -> None:
    text = "x" * (CAP - 10) + " \t\n " + "y" * 20
    assert embedded_text(text) == "x" * (CAP - 10)


@pytest.mark.parametrize("filler", ["z", "港", "🚢"], ids=["letters", "Han", "emoji"])
def test_a_text_without_a_space_within_the_cap_is_cut_at_the_cap(filler: str) -> None:
    text = filler * (CAP + 1)
    assert embedded_text(text) == filler * CAP
    spaced_early = " " + filler * (2 * CAP)
    assert embedded_text(spaced_early) == spaced_early[:CAP]


@pytest.mark.parametrize("filler", ["港", "🚢"], ids=["Han", "emoji"])
def test_a_text_whose_last_word_ends_in_the_first_half_of_the_cap_is_cut_at_the_cap(
    filler: str,
) -> None:
    """A description in a script without spaces, after a name and type in one with them:
    cut after `org.` it would lose all of the description."""
    head = "Harbour Ferries. org. "
    text = head + filler * (2 * CAP)
    assert embedded_text(text) == text[:CAP]
    half = "w" * (CAP // 2) + " " + filler * CAP
    assert embedded_text(half) == half[:CAP]
    past_half = "w" * (CAP // 2 + 1) + " " + filler * CAP
    assert embedded_text(past_half) == "w" * (CAP // 2 + 1)


def test_any_white_space_ends_a_word() -> None:
    text = "w" * (CAP - 2) + "\u3000" + "more words"  # an ideographic space
    assert embedded_text(text) == "w" * (CAP - 2)


def test_a_query_is_embedded_with_its_romanised_form_cut_as_a_text_is() -> None:
    assert query_embedding_text("Москва") == "Москва (Moskva)"
    long = "Москва " * CAP
    assert query_embedding_text(long) == embedded_text(
        f"{long} ({long.replace('Москва', 'Moskva')})"
    )
    assert len(query_embedding_text(long)) <= CAP


def test_an_entity_s_text_is_cut_so_its_source_is_of_what_is_embedded() -> None:
    tenant = new_tenant()
    entity = make_entity(tenant, "Harbour Ferries", "org", description="ferry " * (CAP // 3))
    whole = f"Harbour Ferries. org. {entity.description}"
    assert entity.embedding_text() == embedded_text(whole)
    assert len(entity.embedding_text()) <= CAP


def test_the_text_and_source_of_an_entity_within_the_cap_are_those_stored_before() -> None:
    """Digests pinned from the version before the cut: no stored vector of such a text
    goes stale."""
    entity = Entity.create(
        uuid.UUID(int=1),
        "International Business Machines",
        "company",
        description="Maker of mainframes",
        properties={"aliases": ["IBM", "Big Blue"]},
    )
    text = entity.embedding_text()
    assert text == "International Business Machines (IBM, Big Blue). company. Maker of mainframes"
    assert vector_source("hashing/384", text) == "2f8586f4055116b1c34c491f"
    description = "m" * (CAP - len("Acme. org. "))
    at_cap = make_entity(new_tenant(), "Acme", "org", description=description)
    assert at_cap.embedding_text() == f"Acme. org. {description}"
