"""`make_embedding_provider`: the embedding provider that settings name."""

from __future__ import annotations

from enum import StrEnum

from redstring.adapters.embeddings.hashing import HashingEmbeddingProvider
from redstring.adapters.embeddings.openai_compatible import (
    OpenAICompatibleEmbeddings,
    RetryPolicy,
)
from redstring.adapters.embeddings.openai_compatible import (
    check_base_url as check_base_url,  # the `openai` base URL's rule, for the settings
)
from redstring.adapters.embeddings.sentence_transformers import SentenceTransformerEmbeddings
from redstring.adapters.embeddings.static import StaticEmbeddingProvider, shipped_dimension
from redstring.composition.extras import library_installed
from redstring.domain.errors import InvalidInputError
from redstring.domain.vectors import check_dimension
from redstring.ports.embedding_provider import EmbeddingProvider


class EmbeddingsKind(StrEnum):
    """Which embedding provider turns text into vectors."""

    STATIC = "static"
    HASHING = "hashing"
    OPENAI = "openai"
    SENTENCE_TRANSFORMERS = "sentence-transformers"


EMBEDDING_KINDS = tuple(kind.value for kind in EmbeddingsKind)

# The provider a server runs with when no REDSTRING_EMBEDDINGS* setting is given.
DEFAULT_EMBEDDINGS = EmbeddingsKind.STATIC
DEFAULT_HASHING_DIMENSION = 384
# What the `local` extra installs, which the sentence-transformers provider imports.
LOCAL_LIBRARY = "sentence_transformers"


def check_embedding_choice(
    kind: str,
    *,
    model: str | None,
    base_url: str | None,
    query_prompt: str | None,
    document_prompt: str | None,
    dimension: int | None,
) -> str:
    """The canonical spelling of `kind`, once the options it needs are there and a given
    `dimension` is one the kind can give; else `InvalidInputError` saying what is wrong.
    Builds nothing and loads no model."""
    chosen = kind.strip().lower().replace("_", "-")
    if chosen not in EMBEDDING_KINDS:
        raise InvalidInputError(
            f"unknown embedding provider {kind!r}; choose one of {', '.join(EMBEDDING_KINDS)}"
        )
    if chosen != "sentence-transformers" and (query_prompt or document_prompt):
        raise InvalidInputError(
            f"query_prompt and document_prompt are applied by sentence-transformers only, "
            f"not by {chosen!r}"
        )
    if chosen == "static" and dimension not in (None, shipped_dimension()):
        raise InvalidInputError(
            f"the 'static' embedding provider's vectors have {shipped_dimension()} dimensions, "
            f"not {dimension}: leave the dimension unset"
        )
    if chosen in ("static", "hashing"):
        return chosen
    if not model:
        raise InvalidInputError(f"the {chosen!r} embedding provider needs a model")
    if chosen == "sentence-transformers" and not library_installed(LOCAL_LIBRARY):
        raise InvalidInputError(
            "the 'sentence-transformers' embedding provider needs the local extra: "
            "pip install 'redstring[local]'"
        )
    if chosen == "openai" and not base_url:
        raise InvalidInputError("the 'openai' embedding provider needs a base_url")
    if chosen == "openai" and dimension is None:
        raise InvalidInputError("the 'openai' embedding provider needs a dimension")
    return chosen


def make_embedding_provider(
    kind: str = DEFAULT_EMBEDDINGS,
    *,
    dimension: int | None = None,
    model: str | None = None,
    base_url: str | None = None,
    api_key_env: str = "OPENAI_API_KEY",
    batch_size: int = 64,
    max_concurrency: int = 4,
    timeout: float = 30.0,
    query_prompt: str | None = None,
    document_prompt: str | None = None,
    time_limit: float | None = None,
) -> EmbeddingProvider:
    """Build the provider of `kind` (one of `EMBEDDING_KINDS`; case and `_`/`-` ignored).

    `dimension` None means the provider's own: 384 for `hashing`, the
    model's for `static` and `sentence-transformers`; `openai` needs it (it
    checks every response against it). A `dimension` that `static` does not
    give raises `InvalidInputError`, before any model loads; a
    `sentence-transformers` model of another dimension raises
    `DimensionMismatchError` once loaded. `static` loads the model shipped in
    the package (once per process). `openai` needs `model`
    and `base_url` (no default host: texts go only where settings say) and
    reads its key from the variable `api_key_env`. `sentence-transformers`
    needs `model` (a name or a local path) and loads it now. Prompts change
    what the vectors mean, so they are refused (`InvalidInputError`) by kinds
    that cannot apply them; the transport options are ignored by kinds without
    transport. An unknown kind or a missing option raises `InvalidInputError`.
    The `openai` provider owns an HTTP client: `await provider.aclose()` at
    shutdown. `time_limit` bounds each of its calls, retries and waits included
    (`RetryPolicy.max_elapsed`); None lets it wait out an outage as its default
    policy says.
    """
    chosen = check_embedding_choice(
        kind,
        model=model,
        base_url=base_url,
        query_prompt=query_prompt,
        document_prompt=document_prompt,
        dimension=dimension,
    )
    if chosen == "hashing":
        return HashingEmbeddingProvider(dimension or DEFAULT_HASHING_DIMENSION)
    if chosen == "static":
        return StaticEmbeddingProvider()  # its dimension is checked above
    assert model is not None  # checked above
    if chosen == "openai":
        assert base_url is not None  # checked above
        assert dimension is not None  # checked above
        return OpenAICompatibleEmbeddings(
            base_url=base_url,
            model=model,
            dimension=dimension,
            api_key_env=api_key_env,
            batch_size=batch_size,
            max_concurrency=max_concurrency,
            timeout=timeout,
            retry=RetryPolicy(max_elapsed=time_limit),
        )
    local = SentenceTransformerEmbeddings(
        model,
        query_prompt=query_prompt,
        document_prompt=document_prompt,
        batch_size=batch_size,
    )
    if dimension is not None:
        check_dimension(dimension, local.dimension, f"the model {model!r}")
    return local


def default_embedding_provider() -> EmbeddingProvider:
    """The provider `redstring serve` runs with when no embedding setting is given."""
    return make_embedding_provider()
