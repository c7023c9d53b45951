"""`fragments_in_dependency_order`: the fragments of a document, each after those it spreads.

A rule that measures an operation (its depth, aliases or cost) visits each
fragment definition once, in this order, and remembers its measure; a spread
then costs one look-up. Walking into every spread instead takes time
exponential in the document: `fragment F1 on Query { ...F0 ...F0 }` up to
`F39` is 2^39 walks of `F0` from a document under 1 KB.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping

from graphql import (
    DocumentNode,
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    InlineFragmentNode,
    SelectionSetNode,
)


def spread_names(selection_set: SelectionSetNode | None) -> Iterator[str]:
    """The names of the fragments spread in `selection_set`, at any depth inside it (not
    through the spread fragments themselves), once per spread."""
    pending = [selection_set] if selection_set is not None else []
    while pending:
        for selection in pending.pop().selections:
            if isinstance(selection, FragmentSpreadNode):
                yield selection.name.value
            elif (
                isinstance(selection, FieldNode | InlineFragmentNode)
                and selection.selection_set is not None
            ):
                pending.append(selection.selection_set)


def child_field_names(
    fields: Iterable[FieldNode], fragments: Mapping[str, FragmentDefinitionNode]
) -> set[str]:
    """The schema names of the fields selected directly under `fields` (the nodes of one
    field), through fragments and inline fragments, each fragment visited once.

    Strawberry's `Info.selected_fields` expands a fragment at every spread, so
    asking it takes time exponential in a chain of fragments.
    """
    names: set[str] = set()
    visited: set[str] = set()
    pending = [field.selection_set for field in fields if field.selection_set is not None]
    while pending:
        for selection in pending.pop().selections:
            if isinstance(selection, FieldNode):
                names.add(selection.name.value)
            elif isinstance(selection, InlineFragmentNode):
                pending.append(selection.selection_set)
            elif isinstance(selection, FragmentSpreadNode):
                name = selection.name.value
                if name not in visited and name in fragments:
                    visited.add(name)
                    pending.append(fragments[name].selection_set)
    return names


def fragments_in_dependency_order(document: DocumentNode) -> list[FragmentDefinitionNode]:
    """Every fragment definition of `document` (the first of a repeated name), each after
    every fragment it spreads, except along a cycle.

    Fragment cycles and unknown fragments are invalid (graphql-core's
    `NoFragmentCyclesRule` and `KnownFragmentNamesRule` report them), but the
    rules that use this order run beside those, so it must end on them: a
    spread that closes a cycle is skipped, and a rule finds no measure for
    that fragment yet and counts it as empty. Iterative, so a chain of
    thousands of fragments does not exhaust Python's stack.
    """
    definitions: dict[str, FragmentDefinitionNode] = {}
    for definition in document.definitions:
        if isinstance(definition, FragmentDefinitionNode):
            definitions.setdefault(definition.name.value, definition)
    ordered: list[FragmentDefinitionNode] = []
    started: set[str] = set()
    for root in definitions:
        if root in started:
            continue
        started.add(root)
        stack = [(root, iter(set(spread_names(definitions[root].selection_set))))]
        while stack:
            name, spreads = stack[-1]
            following = next((s for s in spreads if s in definitions and s not in started), None)
            if following is None:
                stack.pop()
                ordered.append(definitions[name])
            else:
                started.add(following)
                fragment = definitions[following]
                stack.append((following, iter(set(spread_names(fragment.selection_set)))))
    return ordered
