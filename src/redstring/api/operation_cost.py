"""`operation_cost` and `CostLimit`: an estimate of the work an operation asks for, and
the limit on it, checked with the request's variables before anything executes.

The unit is one object returned (about 15 µs of a worker's CPU on the memory
backend). The cost of a selection set is the sum over its fields of object type:

    cost(field) = call(field) + n(field) * (1 + cost(field's selection set))

plus, over its scalar fields, `call(field)` alone (0 for all but `relationshipCount`);
`n(field)` is how many objects the field can return per parent object:

- `k` or `first` when the field takes one (`retrieve`, `relationships`,
  `entityTypes`): its value, from the document, a variable or the default
  (`relationships`' `first` is 50, `entityTypes`' 100);
- else the length of its list argument (a mutation's inputs or ids,
  `_entities`' representations), each item being one object written or read;
- else, for an introspection list (`__Schema.types`, `__Type.fields`, ...), the
  mean length of such lists in this schema (`introspection_list_sizes`);
- else 1.

and `call(field)` is the work a field does once per parent object, whatever it
returns (`CALL_COSTS`): `retrieve` searches (`SEARCH_COST`, plus
`SEARCH_COST_PER_K` for each of `k`: both channels read `k * overfetch`
candidates and fusion ranks them, and `SEARCH_COST_PER_CHARACTER` for each
character of its query; nothing at `k: 0`, which searches nothing),
`relationships` resolves and batches its call (`RELATIONSHIPS_CALL_COST`, even
at `first: 0`), `relationshipCount` resolves, batches and counts
(`RELATIONSHIP_COUNT_COST`), `matchedRanges` reads its match's text against the
query (`MATCHED_RANGES_COST`), `entityTypes` scans the tenant (`ENTITY_TYPES_COST`;
nothing at `first: 0`, which reads nothing); every other field's is 0. An `after`
(the next page of `relationships` or `entityTypes`) costs what the first page
does: the store reads as much to find where it begins.
The weights are measured (docs/security.md, "Limits"): a search over 50,000
entities in memory takes about what returning 500 objects does.

Scalar fields but `relationshipCount` cost nothing; aliases and repeated fields
each count; `@skip` and `@include` are ignored. Each fragment is costed once
(`cost(spread)` is its fragment's cost), so the walk is linear in the document. Variables
depend on the request, so this is not a cached validation rule but a step
between validation and execution.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from graphql import (
    DocumentNode,
    ExecutionResult,
    FieldNode,
    FragmentSpreadNode,
    GraphQLEnumType,
    GraphQLError,
    GraphQLField,
    GraphQLInputObjectType,
    GraphQLInterfaceType,
    GraphQLNamedType,
    GraphQLObjectType,
    GraphQLSchema,
    GraphQLUnionType,
    InlineFragmentNode,
    OperationDefinitionNode,
    SelectionSetNode,
    VariableNode,
    get_named_type,
    get_nullable_type,
    is_composite_type,
    is_list_type,
    value_from_ast_untyped,
)
from graphql.pyutils import Undefined
from graphql.type.scalars import GRAPHQL_MAX_INT, GRAPHQL_MIN_INT
from graphql.utilities import get_operation_ast
from strawberry.extensions import SchemaExtension

from redstring.api.errors import ErrorCode
from redstring.api.fragment_order import fragments_in_dependency_order

SIZE_ARGUMENTS = ("k", "first")
# What one search costs apart from its results, in objects returned: the query's
# embedding, a vector search and the lexical blocks, whatever `k` is. Measured on
# the memory backend, short queries: 0.5 ms over 321 entities, 1.5 ms over 5,000,
# 8 ms over 50,000; a 1,000-character query over 5,000 takes 18 ms.
SEARCH_COST = 500
# And for each of `k`, on top of the 1 counted for each result: the `k * overfetch`
# candidates of each channel, fused and ranked (25 to 35 µs per `k` in all).
SEARCH_COST_PER_K = 1
# And for each character of its query: a longer query has more words, blocking keys
# and prefixes to look up (a 1,000-character query over 5,000 entities in memory
# takes 17 ms more than a short one, about 1 per character).
SEARCH_COST_PER_CHARACTER = 1
# What one `relationships` field costs per parent object even when it returns nothing
# (its resolver, its DataLoader key and its turn of the event loop): about 80 µs, in
# memory over the demo (`first: 0` beside each of a `retrieve`'s 100 matches).
RELATIONSHIPS_CALL_COST = 10
# What one `relationshipCount` costs per parent object: its resolver, its DataLoader key and
# its turn of the event loop, as a `relationships` field's, which it measures at about two
# thirds of (50 against 80 µs, in memory over the demo); and on Neo4j, with `types`, a read
# of each of the entity's edges on the server (without, its degree), which a
# `relationships` field makes too and is not weighed by the entity's degree either.
RELATIONSHIP_COUNT_COST = 10
# What one `matchedRanges` costs per match on top of the 1 its list counts: its reading
# of `matchedText` against the query (`highlight_ranges`, about 30 µs over the demo's
# names) and its ranges, about 60 µs a match in all in memory over the demo (under 10 µs
# for a match without a `matchedText`). A crafted text of hundreds of one-letter words
# against a query of dozens of words alike compares at most `MAX_COMPARED_PAIRS` word
# pairs, up to about 8 ms a match (150 ms before that bound); each match takes a turn of
# the loop, so the request's deadline stops them. What is read of a text is cut as the
# lexical score cuts it (500 characters).
MATCHED_RANGES_COST = 3
# What one `entityTypes` costs apart from the `first` types it may return: over Neo4j a
# scan of the tenant's entities, about 1 µs of the server an entity (15 ms at 10,000,
# 100 ms at 100,000 of few types; about 10 µs an entity when each is of a type of its
# own, every type sorted on the server: bench/entity_types.py). The cost is
# reckoned before the tenant's size is known: a tenant of 50,000 (50 ms) in units of
# 15 µs, 3,300, rounded down. In memory the writes keep the counts sorted, and it costs
# next to nothing.
ENTITY_TYPES_COST = 3_000


@dataclass(frozen=True)
class CallCost:
    """`call(field)`: what a field does once per parent object, whatever it returns.

    `fixed`, plus `per_item` for each of its `k` or `first`, plus `per_character` for
    each character of its string argument `text`; nothing at all when `idle_at_zero`
    and it is asked for no item (it then does no work)."""

    fixed: int
    per_item: int = 0
    text: str | None = None
    per_character: int = 0
    idle_at_zero: bool = False


# `call(field)` by (parent type, field); every other field's is 0.
CALL_COSTS: Mapping[tuple[str, str], CallCost] = {
    ("Query", "retrieve"): CallCost(
        SEARCH_COST,
        per_item=SEARCH_COST_PER_K,
        text="query",
        per_character=SEARCH_COST_PER_CHARACTER,
        idle_at_zero=True,  # `k: 0` answers no matches without searching
    ),
    ("Entity", "relationships"): CallCost(RELATIONSHIPS_CALL_COST),
    ("Entity", "relationshipCount"): CallCost(RELATIONSHIP_COUNT_COST),
    ("ScoredEntity", "matchedRanges"): CallCost(MATCHED_RANGES_COST),
    ("Query", "entityTypes"): CallCost(
        ENTITY_TYPES_COST,
        idle_at_zero=True,  # `first: 0` answers no types without reading the tenant
    ),
}
# Costs are saturated here (the largest integer a JSON number holds exactly), so a
# document built to overflow the estimate keeps it a small number.
COST_CEILING = 2**53 - 1


def _saturated(value: int) -> int:
    return min(value, COST_CEILING)


@lru_cache(maxsize=8)
def introspection_list_sizes(schema: GraphQLSchema) -> Mapping[tuple[str, str], int]:
    """How many items each introspection list field returns in `schema`, on average over
    the lists of its kind (rounded up), so that the whole schema's introspection costs
    about what it returns rather than the product of the longest lists."""
    types = list(schema.type_map.values())
    with_fields = [t for t in types if isinstance(t, GraphQLObjectType | GraphQLInterfaceType)]
    fields = [f for t in with_fields for f in t.fields.values()]
    abstract = [t for t in types if isinstance(t, GraphQLInterfaceType | GraphQLUnionType)]
    arguments = [len(f.args) for f in fields] + [len(d.args) for d in schema.directives]
    return {
        ("__Schema", "types"): len(types),
        ("__Schema", "directives"): len(schema.directives),
        ("__Type", "fields"): _mean([len(t.fields) for t in with_fields]),
        ("__Type", "inputFields"): _mean(
            [len(t.fields) for t in types if isinstance(t, GraphQLInputObjectType)]
        ),
        ("__Type", "enumValues"): _mean(
            [len(t.values) for t in types if isinstance(t, GraphQLEnumType)]
        ),
        ("__Type", "interfaces"): _mean([len(t.interfaces) for t in with_fields]),
        ("__Type", "possibleTypes"): _mean([len(schema.get_possible_types(t)) for t in abstract]),
        ("__Field", "args"): _mean(arguments),
        ("__Directive", "args"): _mean(arguments),
    }


def _mean(sizes: list[int]) -> int:
    return -(-sum(sizes) // len(sizes)) if sizes else 0


class _Costing:
    """The walk of one operation: the schema, the request's variables and the fragments'
    costs so far."""

    def __init__(
        self,
        schema: GraphQLSchema,
        operation: OperationDefinitionNode,
        variables: Mapping[str, Any],
    ) -> None:
        self.schema = schema
        self.variables = dict(variables)
        for definition in operation.variable_definitions or ():
            name = definition.variable.name.value
            if name not in self.variables and definition.default_value is not None:
                self.variables[name] = value_from_ast_untyped(definition.default_value)
        self.fragments: dict[str, int] = {}
        self.list_sizes = introspection_list_sizes(schema)

    def selection_set(
        self, parent: GraphQLNamedType | None, selection_set: SelectionSetNode
    ) -> int:
        cost = 0
        for selection in selection_set.selections:
            if isinstance(selection, FieldNode):
                cost += self.field(parent, selection)
            elif isinstance(selection, InlineFragmentNode):
                condition = selection.type_condition
                inner = parent if condition is None else self.schema.get_type(condition.name.value)
                cost += self.selection_set(inner, selection.selection_set)
            elif isinstance(selection, FragmentSpreadNode):
                cost += self.fragments.get(selection.name.value, 0)
        return _saturated(cost)

    def field(self, parent: GraphQLNamedType | None, node: FieldNode) -> int:
        if not isinstance(parent, GraphQLObjectType | GraphQLInterfaceType):
            return 0  # a union's only field is `__typename`
        definition = self.schema.get_field(parent, node.name.value)
        if definition is None:
            return 0
        call = CALL_COSTS.get((parent.name, node.name.value))
        if not is_composite_type(get_named_type(definition.type)):  # a scalar: its call alone
            return 0 if call is None else self.call(call, definition, node, 1)
        inner = 0
        if node.selection_set is not None:
            inner = self.selection_set(get_named_type(definition.type), node.selection_set)
        count = self.count(parent, definition, node)
        called = 0 if call is None else self.call(call, definition, node, count)
        return _saturated(called + count * (1 + inner))

    def call(self, cost: CallCost, definition: GraphQLField, node: FieldNode, count: int) -> int:
        """`call(field)` by `cost`, for a field asked for `count` items."""
        if cost.idle_at_zero and count == 0:
            return 0
        text = None if cost.text is None else self.argument(definition, node, cost.text)
        characters = len(text) if isinstance(text, str) else 0
        return cost.fixed + cost.per_item * count + cost.per_character * characters

    def count(self, parent: GraphQLNamedType, definition: GraphQLField, node: FieldNode) -> int:
        """`n(field)`: how many objects the field can return per parent object."""
        for name in SIZE_ARGUMENTS:
            if name in definition.args:
                return _size(self.argument(definition, node, name))
        for name, argument in definition.args.items():
            if is_list_type(get_nullable_type(argument.type)):
                value = self.argument(definition, node, name)
                return len(value) if isinstance(value, list) else int(value is not None)
        return self.list_sizes.get((parent.name, node.name.value), 1)

    def argument(self, definition: GraphQLField, node: FieldNode, name: str) -> Any:
        """The value of argument `name` as execution will see it, before coercion."""
        given = next((a.value for a in node.arguments or () if a.name.value == name), None)
        if isinstance(given, VariableNode) and given.name.value in self.variables:
            return self.variables[given.name.value]
        if given is not None and not isinstance(given, VariableNode):
            return value_from_ast_untyped(given, self.variables)
        default = definition.args[name].default_value
        return None if default is Undefined else default


def _size(value: Any) -> int:
    """A `k` or `first` as a count. A value that is no GraphQL `Int` (a fraction,
    infinity or NaN, which JSON decoding lets through, or beyond 32 bits) counts as 0:
    coercing the variables refuses it, as `BAD_USER_INPUT`, before anything runs."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0
    if isinstance(value, float) and not value.is_integer():  # also infinity and NaN
        return 0
    if not GRAPHQL_MIN_INT <= value <= GRAPHQL_MAX_INT:
        return 0
    return max(0, int(value))


def operation_cost(
    schema: GraphQLSchema,
    document: DocumentNode,
    operation_name: str | None,
    variables: Mapping[str, Any],
) -> int | None:
    """The cost of the operation `operation_name` of a valid `document` with `variables`
    (see the module docstring), or `None` when the document names no such operation."""
    operation = get_operation_ast(document, operation_name)
    if operation is None:
        return None
    costing = _Costing(schema, operation, variables)
    for fragment in fragments_in_dependency_order(document):
        condition = schema.get_type(fragment.type_condition.name.value)
        costing.fragments[fragment.name.value] = costing.selection_set(
            condition, fragment.selection_set
        )
    root = schema.get_root_type(operation.operation)
    return costing.selection_set(root, operation.selection_set)


class CostLimit(SchemaExtension):
    """Refuses an operation costing more than `max_cost` (`operation_cost`) before it
    executes: the result is one `GRAPHQL_VALIDATION_FAILED` error whose extensions hold
    `cost` and `maxCost`."""

    def __init__(self, *, max_cost: int) -> None:
        self.max_cost = max_cost

    def on_execute(self) -> Iterator[None]:
        context = self.execution_context
        if context.graphql_document is not None and context.result is None:
            cost = operation_cost(
                context.schema._schema,
                context.graphql_document,
                context.operation_name,
                context.variables or {},
            )
            if cost is not None and cost > self.max_cost:
                context.result = ExecutionResult(data=None, errors=[self.refusal(cost)])
        yield

    def refusal(self, cost: int) -> GraphQLError:
        return GraphQLError(
            f"the operation costs {cost}; at most {self.max_cost} is allowed (each "
            "retrieve's search and each object it may return count: ask fewer retrieves, "
            "lower k or first, or split the operation)",
            extensions={
                "code": ErrorCode.GRAPHQL_VALIDATION_FAILED.value,
                "cost": cost,
                "maxCost": self.max_cost,
            },
        )
