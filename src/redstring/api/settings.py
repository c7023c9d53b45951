"""`Settings`: everything a server or loader reads from the environment (`REDSTRING_*`)."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated, Literal
from urllib.parse import urlsplit

from pydantic import Field, SecretStr, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from redstring.api.graphiql import AssetSource
from redstring.api.limits import Limits
from redstring.api.log_config import LogFormat
from redstring.composition.embedding_choice import (
    DEFAULT_EMBEDDINGS,
    EmbeddingsKind,
    check_base_url,
)
from redstring.composition.neo4j_uri import check_neo4j_uri
from redstring.domain.arguments import MAX_SECONDS


class Backend(StrEnum):
    """Where entities, relationships and vectors are kept."""

    MEMORY = "memory"
    NEO4J = "neo4j"


class AuthMode(StrEnum):
    """How callers prove who they are (docs/security.md)."""

    NONE = "none"
    APIKEY = "apikey"
    JWT = "jwt"


# Seconds a command that runs for minutes (`redstring load`, `redstring rekey`) keeps
# trying while Neo4j cannot be reached (a restart, a leader election), unless
# REDSTRING_NEO4J_OUTAGE_RETRY says otherwise: stopping it costs more than waiting.
LONG_COMMAND_OUTAGE_RETRY = 120.0
# The shortest REDSTRING_BOOKMARK_SECRET taken (`redstring.api.bookmarks`).
MIN_BOOKMARK_SECRET_CHARS = 32


# A setting of seconds: finite, and at most `MAX_SECONDS` (about 31 years), which every
# use of one (the Neo4j driver's milliseconds, asyncio's and uvicorn's waits) can take.
Seconds = Annotated[float, Field(allow_inf_nan=False, le=MAX_SECONDS)]


def origins_listed(text: str) -> tuple[str, ...]:
    """The origins of `REDSTRING_CORS_ORIGINS` (`https://a.example, https://b.example`),
    blanks dropped."""
    return tuple(origin.strip() for origin in text.split(",") if origin.strip())


class Settings(BaseSettings):
    """Server and loader settings; each field `x` is read from `REDSTRING_X`.

    Values passed to the constructor win over the environment, which is how
    command-line options override it.
    """

    model_config = SettingsConfigDict(env_prefix="REDSTRING_", extra="ignore")

    backend: Backend = Backend.MEMORY
    neo4j_uri: str = "bolt://127.0.0.1:7687"
    neo4j_user: str = "neo4j"
    neo4j_password: SecretStr = SecretStr("")
    neo4j_database: str | None = None
    # Seconds a Neo4j read or write keeps trying while the server cannot be reached:
    # 0 answers SERVICE_UNAVAILABLE at once; `redstring load` and `rekey` wait
    # `LONG_COMMAND_OUTAGE_RETRY` unless this is set (`for_long_command`).
    neo4j_outage_retry: Seconds = Field(default=0.0, ge=0)
    # Seconds a Neo4j transaction may run, lock waits included, before the server ends
    # it (`Neo4jSettings.transaction_timeout`).
    neo4j_transaction_timeout: Seconds = Field(default=30.0, gt=0)

    embeddings: EmbeddingsKind = DEFAULT_EMBEDDINGS
    # None: the provider's own (384 for hashing, the model's for static and
    # sentence-transformers); openai needs it. A model of another dimension is refused.
    embedding_dimension: int | None = Field(default=None, ge=1, le=8192)
    embedding_model: str | None = None
    embedding_base_url: str | None = None
    embedding_api_key_env: str = "OPENAI_API_KEY"
    embedding_batch_size: int = Field(default=64, ge=1)
    embedding_concurrency: int = Field(default=4, ge=1)
    embedding_timeout: Seconds = Field(default=30.0, gt=0)
    embedding_query_prompt: str | None = None
    embedding_document_prompt: str | None = None
    query_cache_size: int = Field(default=2048, ge=0)

    host: str = "127.0.0.1"
    port: int = Field(default=8000, ge=0, le=65535)
    workers: int = Field(default=1, ge=1)
    blas_threads: int = Field(default=1, ge=0)
    gc_freeze: bool = True
    log_level: Literal["critical", "error", "warning", "info", "debug"] = "info"
    log_format: LogFormat = "text"

    demo: bool = False
    graphiql: bool = True
    graphiql_assets: AssetSource = AssetSource.LOCAL
    federation: bool = False
    readiness_timeout: Seconds = Field(default=2.0, gt=0)
    introspection: bool = True
    # Origins whose pages may call the API from a browser (CORS), comma-separated;
    # none by default, `*` for any.
    cors_origins: Annotated[tuple[str, ...], NoDecode] = ()

    auth: AuthMode = AuthMode.NONE
    api_keys_file: Path | None = None
    jwt_secret: SecretStr | None = None
    jwt_jwks: str | None = None
    jwt_issuer: str | None = None
    jwt_audience: str | None = None
    jwt_tenants_claim: str = "tenants"
    jwt_role_claim: str = "role"
    # The key bookmarks are signed and encrypted with (`redstring.api.bookmarks`), the
    # same on every replica; unset, each `serve` makes one at start for its workers.
    bookmark_secret: SecretStr | None = None

    max_k: int = Field(default=100, ge=0)
    max_query_length: int = Field(default=1000, ge=1)
    max_first: int = Field(default=200, ge=0)
    max_depth: int = Field(default=10, ge=1)
    max_aliases: int = Field(default=30, ge=0)
    max_tokens: int = Field(default=20_000, ge=1)
    max_batch: int = Field(default=1000, ge=1)
    max_cost: int = Field(default=20_000, ge=1)
    max_body_bytes: int = Field(default=1_048_576, ge=1)
    max_json_depth: int = Field(default=64, ge=1, le=256)
    request_timeout: Seconds = Field(default=10.0, gt=0)
    # Seconds a connection has to send a request's head (`api/connections.py`), and to
    # send its next one after a response (uvicorn's keep-alive timeout).
    header_timeout: Seconds = Field(default=10.0, gt=0)
    # Bytes a request's head (request line and headers) may take; a longer one is
    # refused with 431 and its connection closed (`api/connections.py`).
    max_header_bytes: int = Field(default=65_536, ge=1)
    keep_alive_timeout: Seconds = Field(default=5.0, gt=0)

    @field_validator("embeddings", mode="before")
    @classmethod
    def _embeddings_spelling(cls, value: object) -> object:
        """`OpenAI` and `sentence_transformers` name the same kinds as the canonical spelling."""
        return value.strip().lower().replace("_", "-") if isinstance(value, str) else value

    @field_validator("host")
    @classmethod
    def _host_named(cls, value: str) -> str:
        """An empty host would have uvicorn listen on every interface: one has to ask
        for that (`0.0.0.0`), not leave a variable empty."""
        if not value.strip():
            raise ValueError(
                "must not be empty (empty listens on every interface): give 127.0.0.1, "
                "or 0.0.0.0 to listen on all"
            )
        return value.strip()

    @field_validator("neo4j_uri")
    @classmethod
    def _neo4j_uri_takes(cls, value: str) -> str:
        """A URI the driver would refuse when it is built or first connects (a scheme, a
        port that is no number) is refused with the other settings, by every command."""
        return check_neo4j_uri(value)

    @field_validator("embedding_base_url")
    @classmethod
    def _embedding_base_url_takes(cls, value: str | None) -> str | None:
        """A URL with a user or password in it is refused, as a Neo4j URI with one is: the
        key has a setting of its own, and a URL is written to logs and messages."""
        if value is None:
            return None
        return check_base_url(value, key_holder=variable_of("embedding_api_key_env"))

    @field_validator("cors_origins", mode="before")
    @classmethod
    def _origins_listed(cls, value: object) -> object:
        """`https://a.example, https://b.example` as its origins (`origins_listed`)."""
        return origins_listed(value) if isinstance(value, str) else value

    @field_validator("cors_origins")
    @classmethod
    def _origins_are_origins(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        """Each an origin as a browser sends it (scheme and host, lower case, a port,
        no path), since they are compared as strings; `*` for any."""
        origins = []
        for origin in value:
            if origin == "*":
                origins.append(origin)
                continue
            parts = urlsplit(origin)
            if (
                parts.scheme.lower() not in ("http", "https")
                or not parts.hostname
                or parts.path
                or parts.query
                or parts.fragment
                or parts.username is not None
            ):
                raise ValueError(
                    f"{origin!r} is no origin: give scheme and host (and port), as "
                    "https://app.example.com, or *"
                )
            origins.append(origin.lower())
        return tuple(origins)

    @field_validator("bookmark_secret")
    @classmethod
    def _bookmark_secret_long(cls, value: SecretStr | None) -> SecretStr | None:
        """A secret short enough to guess would let a caller forge bookmarks."""
        if value is not None and len(value.get_secret_value()) < MIN_BOOKMARK_SECRET_CHARS:
            raise ValueError(
                f"must be at least {MIN_BOOKMARK_SECRET_CHARS} characters (a random one:"
                " `python -c 'import secrets; print(secrets.token_urlsafe(32))'`)"
            )
        return value

    def bookmark_secret_value(self) -> str | None:
        """`bookmark_secret` as text, None when unset."""
        return None if self.bookmark_secret is None else self.bookmark_secret.get_secret_value()

    @field_validator("log_level", mode="before")
    @classmethod
    def _log_level_spelling(cls, value: object) -> object:
        """`DEBUG` and `Info` name the levels as `debug` and `info` do."""
        return value.strip().lower() if isinstance(value, str) else value

    @model_validator(mode="after")
    def _neo4j_needs_password(self) -> Settings:
        if self.backend is Backend.NEO4J and not self.neo4j_password.get_secret_value():
            raise ValueError("REDSTRING_NEO4J_PASSWORD is required with the neo4j backend")
        return self

    def limits(self) -> Limits:
        """The request limits these settings set."""
        return Limits(
            max_k=self.max_k,
            max_query_length=self.max_query_length,
            max_first=self.max_first,
            max_depth=self.max_depth,
            max_aliases=self.max_aliases,
            max_tokens=self.max_tokens,
            max_batch=self.max_batch,
            max_cost=self.max_cost,
            max_body_bytes=self.max_body_bytes,
            max_json_depth=self.max_json_depth,
            request_timeout=self.request_timeout,
        )


class _LogFormatSetting(BaseSettings):
    """`Settings.log_format` alone, read as `Settings` reads it."""

    model_config = Settings.model_config
    log_format: LogFormat = "text"


def log_format_asked() -> LogFormat:
    """The log format the environment asks for (`REDSTRING_LOG_FORMAT`), read alone, so
    that what a command says of settings it refuses is in it; `text` when the variable
    is unset or names no format."""
    try:
        return _LogFormatSetting().log_format
    except ValidationError:
        return "text"


def variable_of(setting: str) -> str:
    """The environment variable of the setting named `setting` (`REDSTRING_EMBEDDING_MODEL`
    for `embedding_model`)."""
    return f"{Settings.model_config.get('env_prefix', '')}{setting.upper()}"


def for_long_command(settings: Settings) -> Settings:
    """`settings` as a command that runs for minutes uses them: `neo4j_outage_retry`
    `LONG_COMMAND_OUTAGE_RETRY` unless it was set."""
    if "neo4j_outage_retry" in settings.model_fields_set:
        return settings
    return settings.model_copy(update={"neo4j_outage_retry": LONG_COMMAND_OUTAGE_RETRY})
