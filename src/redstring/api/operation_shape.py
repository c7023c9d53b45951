"""Validation rules on the shape of each operation: how deep it nests and how many
aliases it holds, in time linear in the document.

They replace Strawberry's `QueryDepthLimiter` and `MaxAliasesLimiter`, which walk
into a fragment at every spread and so take time exponential in a chain of
fragments that each spread the previous one twice. Here each fragment is
measured once (`fragments_in_dependency_order`) and a spread adds its measure.

- depth: a field without a selection set is 0 deep, one with a selection set
  is one more than its deepest selection; introspection fields (`__schema`,
  `__type`, `__typename`) are 0, so tools can introspect (the cost limit
  bounds what introspection may return).
- aliases: every aliased field an operation holds, a fragment's aliases once
  per spread, because each spread asks the server for its fields again.
"""

from __future__ import annotations

from collections.abc import Callable

from graphql import (
    FieldNode,
    FragmentSpreadNode,
    GraphQLError,
    InlineFragmentNode,
    OperationDefinitionNode,
    SelectionSetNode,
    ValidationContext,
    ValidationRule,
)

from redstring.api.fragment_order import fragments_in_dependency_order

Measure = Callable[[SelectionSetNode, dict[str, int]], int]


def operation_depth(selection_set: SelectionSetNode, fragments: dict[str, int]) -> int:
    """How deep `selection_set` nests, `fragments` holding the depth of each fragment."""
    deepest = 0
    for selection in selection_set.selections:
        if isinstance(selection, FieldNode):
            if selection.selection_set is None or selection.name.value.startswith("__"):
                continue
            deepest = max(deepest, 1 + operation_depth(selection.selection_set, fragments))
        elif isinstance(selection, InlineFragmentNode):
            deepest = max(deepest, operation_depth(selection.selection_set, fragments))
        elif isinstance(selection, FragmentSpreadNode):
            deepest = max(deepest, fragments.get(selection.name.value, 0))
    return deepest


def operation_aliases(selection_set: SelectionSetNode, fragments: dict[str, int]) -> int:
    """How many aliased fields `selection_set` holds, `fragments` holding each fragment's."""
    count = 0
    for selection in selection_set.selections:
        if isinstance(selection, FieldNode):
            count += selection.alias is not None
            if selection.selection_set is not None:
                count += operation_aliases(selection.selection_set, fragments)
        elif isinstance(selection, InlineFragmentNode):
            count += operation_aliases(selection.selection_set, fragments)
        elif isinstance(selection, FragmentSpreadNode):
            count += fragments.get(selection.name.value, 0)
    return count


def measure_operations(
    context: ValidationContext, measure: Measure
) -> list[tuple[OperationDefinitionNode, int]]:
    """Each operation of the validated document with its measure, each fragment measured
    once."""
    fragments: dict[str, int] = {}
    for fragment in fragments_in_dependency_order(context.document):
        fragments[fragment.name.value] = measure(fragment.selection_set, fragments)
    return [
        (definition, measure(definition.selection_set, fragments))
        for definition in context.document.definitions
        if isinstance(definition, OperationDefinitionNode)
    ]


def _operation_name(operation: OperationDefinitionNode) -> str:
    return operation.name.value if operation.name else "anonymous"


def depth_limit_rule(max_depth: int) -> type[ValidationRule]:
    """A rule refusing every operation nested deeper than `max_depth`."""

    class DepthLimit(ValidationRule):
        def __init__(self, context: ValidationContext) -> None:
            super().__init__(context)
            for operation, depth in measure_operations(context, operation_depth):
                if depth > max_depth:
                    context.report_error(
                        GraphQLError(
                            f"'{_operation_name(operation)}' is {depth} deep; it exceeds "
                            f"maximum operation depth of {max_depth}",
                            operation,
                        )
                    )

    return DepthLimit


def alias_limit_rule(max_aliases: int) -> type[ValidationRule]:
    """A rule refusing every operation holding more than `max_aliases` aliases."""

    class AliasLimit(ValidationRule):
        def __init__(self, context: ValidationContext) -> None:
            super().__init__(context)
            for operation, count in measure_operations(context, operation_aliases):
                if count > max_aliases:
                    context.report_error(
                        GraphQLError(
                            f"'{_operation_name(operation)}' has {count} aliases; "
                            f"at most {max_aliases} are allowed",
                            operation,
                        )
                    )

    return AliasLimit
