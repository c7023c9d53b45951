"""`build_schema`: the one place the schema is assembled, and its SDL.

A federated variant (the federation issue) is built the same way from the
same roots, types and `schema_extensions`, with `strawberry.federation.Schema`
in place of `strawberry.Schema` and the same `process_errors`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import strawberry
from graphql import GraphQLError
from strawberry.extensions import (
    MaxAliasesLimiter,
    MaxTokensLimiter,
    QueryDepthLimiter,
    SchemaExtension,
)
from strawberry.types import ExecutionContext

from redstring.api.errors import ErrorCodes, log_errors
from redstring.api.limits import Limits
from redstring.api.schema.mutation import Mutation
from redstring.api.schema.query import Query

ExtensionFactory = type[SchemaExtension] | Callable[[], SchemaExtension]


class RedstringSchema(strawberry.Schema):
    """A Strawberry schema that logs each error at the level its code deserves.

    Strawberry's default logs every error, a typo in a query included, at
    ERROR with a traceback; here only internal errors are.
    """

    def process_errors(
        self, errors: list[GraphQLError], execution_context: ExecutionContext | None = None
    ) -> None:
        log_errors(errors)


def schema_extensions(limits: Limits) -> Sequence[ExtensionFactory]:
    """The extensions every variant of the schema runs: document limits and error codes."""
    return (
        lambda: MaxTokensLimiter(max_token_count=limits.max_tokens),
        lambda: QueryDepthLimiter(max_depth=limits.max_depth),
        lambda: MaxAliasesLimiter(max_alias_count=limits.max_aliases),
        ErrorCodes,
    )


def build_schema(limits: Limits | None = None) -> strawberry.Schema:
    """The redstring schema, with the document limits of `limits` (depth, aliases, tokens)."""
    return RedstringSchema(
        query=Query,
        mutation=Mutation,
        extensions=schema_extensions(limits or Limits()),
    )


def schema_sdl() -> str:
    """The schema in SDL, as committed in `schema.graphql` (with a final newline)."""
    return build_schema().as_str() + "\n"
