"""`HashingEmbeddingProvider` pinned to the vectors it has always produced.

Stored indexes and other tests depend on these exact vectors, so any
rewrite of the provider must reproduce them bit for bit. The expected values
were computed by the original implementation (one blake2b hash per n-gram,
Python loops, `np.bincount`) before it was optimised.
"""

from __future__ import annotations

import hashlib
import struct

import pytest

from redstring import HashingEmbeddingProvider

# Awkward texts on purpose: empty, blank, too short for a 3-gram, diacritics, CJK,
# astral-plane characters, punctuation runs, a repeated gram, a long text.
TEXTS = [
    "Acme Corp. company. A maker of anvils",
    "",
    "  ",
    "ab",
    "Café Müller",
    "東京 タワー",
    "ACME   corp!!",
    "x" * 300,
    "Ada Blom. person",
    "a_b-c.d",
    "\U0001f600 emoji 😀",
]

# sha256 of the vectors of TEXTS, each component packed as a little-endian float64.
DIGESTS = {
    384: "357c21a8b6679b5c3717fb0caefd559a3536f3bc65219a3ddd89aacaacac074b",
    64: "9799275a3910a49ec42b29bd714bcb1b2790fa828128e9044b77f46a0c6915b5",
    7: "9134856cfd6a23f93cbaa1cc9468bf02c55b247bf438408995d06193112e1237",
    1: "fafbd438921897c60c07ddf1aa8c9a9bcf043da0cd9b7d0befba48a2a2c67e49",
}

ACME_16 = [
    0.0,
    0.2773500981126146,
    -0.2773500981126146,
    -0.2773500981126146,
    0.0,
    -0.2773500981126146,
    -0.2773500981126146,
    -0.2773500981126146,
    -0.2773500981126146,
    -0.5547001962252291,
    0.0,
    0.2773500981126146,
    0.0,
    0.0,
    0.0,
    -0.2773500981126146,
]

_A = 0.24253562503633297
ACME_384_NONZERO = {
    9: -_A, 46: _A, 48: _A, 71: -_A, 98: -_A, 107: _A, 120: -_A, 131: -_A, 150: -_A,
    174: -_A, 185: -_A, 192: -_A, 209: -_A, 273: _A, 277: -_A, 353: _A, 383: -_A,
}  # fmt: skip

_B = 0.18569533817705186
ADA_384_NONZERO = {
    33: _B, 46: -_B, 69: -_B, 75: -_B, 99: -_B, 104: _B, 115: _B, 117: -_B, 122: -_B,
    140: -_B, 145: -_B, 149: -0.3713906763541037, 152: _B, 182: _B, 188: -_B, 203: _B,
    215: _B, 223: -_B, 225: _B, 229: _B, 239: -_B, 246: _B, 249: -_B, 296: -_B, 315: -_B,
    381: -_B,
}  # fmt: skip


def _digest(vectors: list[list[float]]) -> str:
    hashed = hashlib.sha256()
    for vector in vectors:
        hashed.update(struct.pack(f"<{len(vector)}d", *vector))
    return hashed.hexdigest()


def _nonzero(vector: list[float]) -> dict[int, float]:
    return {i: x for i, x in enumerate(vector) if x}


async def test_a_short_name_gives_its_pinned_vector() -> None:
    assert (await HashingEmbeddingProvider(16).embed_query(["Acme Corp"])) == [ACME_16]


async def test_sparse_vectors_at_the_default_dimension_are_pinned() -> None:
    provider = HashingEmbeddingProvider(384)
    acme, ada = await provider.embed_documents(["Acme Corp", "Ada Blom. person"])
    assert _nonzero(acme) == ACME_384_NONZERO
    assert _nonzero(ada) == ADA_384_NONZERO


@pytest.mark.parametrize("dimension", sorted(DIGESTS))
async def test_awkward_texts_give_the_pinned_vectors_bit_for_bit(dimension: int) -> None:
    provider = HashingEmbeddingProvider(dimension)
    documents = await provider.embed_documents(TEXTS)
    assert _digest(documents) == DIGESTS[dimension]
    # Again, now that every n-gram has been seen: a cache must not change anything.
    assert _digest(await provider.embed_query(TEXTS)) == DIGESTS[dimension]


async def test_long_texts_give_the_pinned_vectors() -> None:
    """Texts of thousands of characters take another path to their n-grams."""
    texts = ["Acme " + "word7 " * 900, "z" * 5000 + " tail"]
    vectors = await HashingEmbeddingProvider(64).embed_documents(texts)
    assert _digest(vectors) == "ec4d4be9affc4fc0fba8b30b6822a7b73dcac1b3eb9216962c992f3dde6e8fae"


async def test_a_text_embeds_alike_alone_and_in_a_batch() -> None:
    provider = HashingEmbeddingProvider(64)
    batch = await provider.embed_documents(TEXTS)
    alone = [(await HashingEmbeddingProvider(64).embed_documents([t]))[0] for t in TEXTS]
    assert batch == alone


async def test_vectors_are_lists_of_python_floats() -> None:
    vectors = await HashingEmbeddingProvider(8).embed_documents(["Acme Corp", ""])
    assert type(vectors) is list
    assert all(type(v) is list and len(v) == 8 for v in vectors)
    assert all(type(x) is float for v in vectors for x in v)
    assert vectors[1] == [0.0] * 8  # no n-gram: the zero vector, not NaN


async def test_no_texts_give_no_vectors() -> None:
    assert await HashingEmbeddingProvider(8).embed_documents([]) == []
