"""`build_schema`: the one place the schema is assembled, plain or federated, and its SDL.

Both variants are built from the same roots, types and `schema_extensions`
and log errors alike; the federated one (`federation.py`) adds only the
`tenantId id` key on `Entity`, `_entities` and `_service`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from functools import lru_cache
from typing import Any

import strawberry
from graphql import (
    ASTValidationRule,
    DocumentNode,
    FieldNode,
    GraphQLError,
    NoSchemaIntrospectionCustomRule,
    get_named_type,
    is_introspection_type,
    parse,
)
from graphql.language.visitor import SKIP
from strawberry.extensions import (
    AddValidationRules,
    MaxTokensLimiter,
    SchemaExtension,
    ValidationCache,
)
from strawberry.types import ExecutionContext

from redstring.api.errors import ErrorCodes, log_errors, repeated_error_lines
from redstring.api.limits import Limits
from redstring.api.operation_choice import OperationChoice
from redstring.api.operation_cost import CostLimit
from redstring.api.operation_shape import alias_limit_rule, depth_limit_rule
from redstring.api.request_record import RecordOperation
from redstring.api.schema.federation import (
    FEDERATION_VERSION,
    FederatedEntity,
    FederatedSchema,
)
from redstring.api.schema.mutation import Mutation
from redstring.api.schema.query import Query

VALIDATED_DOCUMENTS = 256

ExtensionFactory = type[SchemaExtension] | Callable[[], SchemaExtension]


class NoIntrospection(NoSchemaIntrospectionCustomRule):
    """graphql-core's rule refusing introspection, with one error where a query asks for
    it (`__schema`), not one more for each field under it whose type is introspection's
    too (`types`)."""

    def enter_field(self, node: FieldNode, *args: Any) -> Any:
        type_ = get_named_type(self.context.get_type())
        if type_ is None or not is_introspection_type(type_):
            return None
        super().enter_field(node, *args)
        return SKIP


class ErrorLogging:
    """Logs each error at the level its code deserves (mixed into both schema classes).

    Strawberry's default logs every error, a typo in a query included, at
    ERROR with a traceback; here only internal errors are. A refused embedding key's
    lines and a store outage's are logged once a window (`repeated_errors`, one per
    schema, so one per app), with a count of the ones left out.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.repeated_errors = repeated_error_lines()

    def process_errors(
        self, errors: list[GraphQLError], execution_context: ExecutionContext | None = None
    ) -> None:
        log_errors(errors, self.repeated_errors)


class RedstringSchema(ErrorLogging, strawberry.Schema):
    """The plain schema, for direct clients."""


class RedstringSubgraphSchema(ErrorLogging, FederatedSchema):
    """The Federation 2 subgraph schema, for a gateway."""


@lru_cache(maxsize=VALIDATED_DOCUMENTS)
def _parsed(query: str, options: tuple[tuple[str, Any], ...]) -> DocumentNode:
    return parse(query, **dict(options))


class ParsedDocumentCache(SchemaExtension):
    """Parses each distinct document once per process (documents are never mutated).

    Unlike Strawberry's `ParserCache`, a document that does not parse is left to
    Strawberry's own parse step, so its error is reported as a parse error.
    """

    def on_parse(self) -> Iterator[None]:
        context = self.execution_context
        if context.query and context.graphql_document is None:
            # On an error the document is left unset: Strawberry parses it again and
            # reports the error as a parse error.
            with contextlib.suppress(GraphQLError):
                context.graphql_document = _parsed(
                    context.query, tuple(sorted(context.parse_options.items()))
                )
        yield


def schema_extensions(limits: Limits, *, introspection: bool = True) -> Sequence[ExtensionFactory]:
    """The extensions every variant of the schema runs: document limits (tokens, depth,
    aliases, cost; docs/security.md, "Limits"), the choice of one operation, error
    codes, and caches of parsed and validated documents (clients repeat a few
    operations, and parsing and validating one cost about as much as resolving a
    small `retrieve`). Without `introspection`, `__schema` and `__type` are refused
    (`__typename` and federation's `_service` still answer).

    The validation rules are made once, here: the validation cache is keyed by
    the rules, so rules made per request would make every request miss it.
    """
    limit_rules: list[type[ASTValidationRule]] = [
        depth_limit_rule(limits.max_depth),
        alias_limit_rule(limits.max_aliases),
    ]
    if not introspection:
        limit_rules.append(NoIntrospection)
    return (
        RecordOperation,  # first, so that it sees the errors `ErrorCodes` made public
        ParsedDocumentCache,
        OperationChoice,
        lambda: ValidationCache(maxsize=VALIDATED_DOCUMENTS),
        lambda: MaxTokensLimiter(max_token_count=limits.max_tokens),
        lambda: AddValidationRules(limit_rules),
        lambda: CostLimit(max_cost=limits.max_cost),
        ErrorCodes,
    )


def build_schema(
    limits: Limits | None = None, *, federation: bool = False, introspection: bool = True
) -> RedstringSchema | RedstringSubgraphSchema:
    """The redstring schema, with the document limits of `limits` (depth, aliases, tokens,
    cost); with `federation`, the Federation 2 subgraph variant of the same schema;
    without `introspection`, one that refuses `__schema` and `__type`."""
    extensions = schema_extensions(limits or Limits(), introspection=introspection)
    if federation:
        # `types`: Strawberry finds entity types by walking definitions, and the
        # definitions name the plain `Entity`; `get_fields` swaps it per field.
        return RedstringSubgraphSchema(
            query=Query,
            mutation=Mutation,
            types=[FederatedEntity],
            extensions=extensions,
            federation_version=FEDERATION_VERSION,
        )
    return RedstringSchema(query=Query, mutation=Mutation, extensions=extensions)


def schema_sdl(*, federation: bool = False) -> str:
    """The schema in SDL, as committed in `schema.graphql` (with a final newline); with
    `federation`, the subgraph SDL of `_service { sdl }`, as in `schema.federation.graphql`."""
    return build_schema(federation=federation).as_str() + "\n"
