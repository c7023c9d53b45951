"""`json_depth`: the linear pre-scan that keeps deep JSON from the recursive parser."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from redstring.api.errors import ErrorCode, RequestRefusedError
from redstring.api.request_body import json_depth, parse_json

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(alphabet='[]{}"\\ab\né\u4122'),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.text(alphabet='[]{}"\\a', max_size=3), inner, max_size=3)
    ),
    max_leaves=30,
)


def reference_depth(value: object) -> int:
    if isinstance(value, list):
        return 1 + max(map(reference_depth, value), default=0)
    if isinstance(value, dict):
        return 1 + max(map(reference_depth, value.values()), default=0)
    return 0


@given(json_values, st.booleans())
def test_json_depth_is_exact_for_valid_json(value: object, indent: bool) -> None:
    text = json.dumps(value, indent=2 if indent else None, ensure_ascii=False)
    assert json_depth(text) == reference_depth(value)


@pytest.mark.parametrize(
    ("text", "depth"),
    [
        ("42", 0),
        ('"[[[{{{"', 0),
        ('["\\"]', 1),  # an escaped backslash, then the string ends
        ('["\\"[[[", []]', 2),  # an escaped backslash, an escaped quote, brackets in text
        ('{"a": [{"b": []}], "c": {}}', 4),
        ("]]][[", 0),  # never valid: a parser fails at the first `]`
    ],
)
def test_json_depth_of_tricky_text(text: str, depth: int) -> None:
    assert json_depth(text) == depth


@pytest.mark.parametrize("encoding", ["utf-8", "utf-16", "utf-32"])
def test_parse_json_reads_what_json_reads_and_caps_it(encoding: str) -> None:
    assert parse_json('{"a": [1]}'.encode(encoding), max_depth=2) == {"a": [1]}
    with pytest.raises(RequestRefusedError) as refused:
        parse_json('{"a": [[1]]}'.encode(encoding), max_depth=2)
    assert refused.value.code is ErrorCode.BAD_REQUEST
    assert refused.value.status == 400
