"""The JSONL format of `redstring load`: lines to records, with line numbers in errors.

Loading itself is tested in tests/ingest/."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator

import pytest
from pydantic import TypeAdapter

from redstring import Entity, Relationship, TenantId
from redstring.api import jsonl
from redstring.api.jsonl import InvalidLineError, numbered_records, parse_line
from redstring.composition.ingest import InvalidLine
from redstring.domain.ids import entity_id_for
from tests.unit.test_id_arguments import LOOKALIKES

TENANT = TenantId(uuid.UUID("6f1c1f3e-2b0a-4d7e-9a57-1e2d3c4b5a69"))


def _lines(*records: dict[str, object]) -> list[str]:
    return [json.dumps(r) for r in records]


GOOD = _lines(
    {"kind": "entity", "name": "Acme Corp", "entity_type": "company", "properties": {"x": [1]}},
    {"kind": "relationship", "relationship_type": "WORKS_AT",
     "source": {"name": "Ada Blom", "type": "person"},
     "target": {"name": "ACME corp.", "type": "company"}, "confidence": 0.5},
    {"kind": "entity", "name": "Ada Blom", "entity_type": "person"},
)  # fmt: skip


def test_entity_line_derives_its_id() -> None:
    record = parse_line(GOOD[0], 1, TENANT)
    assert isinstance(record, Entity)
    assert record.id == entity_id_for(TENANT, "company", "Acme Corp")
    assert record.properties["x"] == (1,)


def test_relationship_ends_by_name_resolve_like_entity_ids() -> None:
    record = parse_line(GOOD[1], 2, TENANT)
    assert isinstance(record, Relationship)
    assert record.source_entity_id == entity_id_for(TENANT, "person", "Ada Blom")
    assert record.target_entity_id == entity_id_for(TENANT, "company", "Acme Corp")


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "a line must be a JSON object"),
        ('{"kind": "node"}', "kind must be 'entity' or 'relationship', got 'node'"),
        ('{"kind": "entity", "name": " ", "entity_type": "x"}', "name: "),
        ('{"kind": "entity", "name": "a", "entity_type": "x", "properties": {"p": {}}}',
         "properties.p: a property value must be"),
        ('{"kind": "entity", "name": "a", "entity_type": "x", "tenant_id": "y"}', "tenant_id"),
        (f'{{"kind": "relationship", "relationship_type": "R", "target_id": "{uuid.uuid4()}"}}',
         "exactly one of source_id and source"),
        ('{"kind": "relationship", "relationship_type": "R", "source_id": "x", "target_id": "y"}',
         "source_id"),
        ('{"kind": "entity", "name": "a", "entity_type": "x", "properties": {"n": ' + "9" * 5000
         + "}}", "holds an integer of more than 4300 digits"),
    ],
)  # fmt: skip
def test_bad_lines_say_which_line_and_why(text: str, reason: str) -> None:
    with pytest.raises(InvalidLineError) as raised:
        parse_line(text, 7, TENANT)
    assert str(raised.value).startswith("line 7: ")
    assert reason in raised.value.reason
    assert "pydantic.dev" not in str(raised.value)


def test_a_record_refused_by_the_domain_is_named_in_the_files_terms() -> None:
    """Not as the domain's record (`Entity.name: ...`): the file has no `Entity`."""
    same = uuid.uuid4()
    lines = {
        '{"kind": "entity", "name": " ", "entity_type": "x"}': "name: name must not be blank",
        f'{{"kind": "relationship", "relationship_type": "R", "source_id": "{same}", '
        f'"target_id": "{same}"}}': "a relationship cannot connect an entity to itself",
        f'{{"kind": "relationship", "relationship_type": "{"R" * 201}", '
        f'"source_id": "{same}", "target_id": "{uuid.uuid4()}"}}': (
            "relationship_type: relationship_type must be at most 200 characters, got 201"
        ),
    }
    for text, reason in lines.items():
        with pytest.raises(InvalidLineError) as raised:
            parse_line(text, 7, TENANT)
        assert raised.value.reason == reason


def _relationship(**fields: object) -> str:
    return json.dumps(
        {"kind": "relationship", "relationship_type": "R", "source_id": str(uuid.uuid4()),
         "target_id": str(uuid.uuid4()), **fields}
    )  # fmt: skip


@pytest.mark.parametrize("confidence", ["0.5", True, "1"])
def test_a_confidence_not_a_number_is_refused_as_graphql_refuses_it(confidence: object) -> None:
    """GraphQL's `Float!` takes no string nor boolean; lax pydantic took both."""
    with pytest.raises(InvalidLineError) as raised:
        parse_line(_relationship(confidence=confidence), 7, TENANT)
    assert raised.value.reason == "confidence: Input should be a valid number"


def test_an_integer_confidence_is_a_number_as_in_graphql() -> None:
    record = parse_line(_relationship(confidence=1), 7, TENANT)
    assert isinstance(record, Relationship)
    assert record.confidence == 1.0


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ('{"kind": "entity", "name": "A", "name": "B", "entity_type": "x"}', "name"),
        ('{"kind": "entity", "name": "A", "entity_type": "x", "properties": {"p": 1, "p": 2}}',
         "p"),
        ('{"kind": "entity", "name": 5, "entity_type": "x", "name": "B"}', "name"),
        ('{"kind": "relationship", "relationship_type": "R", "source": {"name": "a", "type": "x",'
         ' "name": "b"}, "target": {"name": "c", "type": "x"}}', "name"),
    ],
)  # fmt: skip
def test_a_key_given_twice_in_an_object_refuses_its_line(text: str, key: str) -> None:
    """Rather than loading the last value without a word, as `json` and pydantic do."""
    for given in (text, text.encode()):
        with pytest.raises(InvalidLineError) as raised:
            parse_line(given, 7, TENANT)
        assert raised.value.reason == f'the key "{key}" is given twice in one object'


@pytest.mark.parametrize(
    ("given", "named"), [(str(TENANT).upper(), TENANT), *((x, None) for x in LOOKALIKES)]
)
def test_a_refused_entity_line_names_its_id_only_when_that_is_a_uuid(
    given: str, named: uuid.UUID | None
) -> None:
    """The id a line that does not validate is said to have (which `--skip-invalid` keeps,
    to name the line a relationship to it is on) is read by the records' rule."""
    text = json.dumps({"kind": "entity", "id": given, "name": "", "entity_type": "x"})
    with pytest.raises(InvalidLineError) as raised:
        parse_line(text, 7, TENANT)
    assert raised.value.entity_id == named


def test_blank_lines_are_skipped() -> None:
    assert parse_line("   \n", 3, TENANT) is None


def test_numbered_records_number_every_line_and_keep_going_past_bad_ones() -> None:
    raw = [
        b"\xef\xbb\xbf" + GOOD[0].encode(),  # a byte-order mark before the first line
        b"\n",
        b'{"kind": "entity", "name": "caf\xe9", "entity_type": "x"}\n',  # Latin-1, not UTF-8
        b"{oops\n",
        GOOD[2].encode() + b"\r\n",
    ]
    numbered = list(numbered_records(raw, TENANT))
    assert [number for number, _ in numbered] == [1, 3, 4, 5]
    assert isinstance(numbered[0][1], Entity)
    assert numbered[1][1] == InvalidLine(3, "not valid UTF-8 (byte 32 of the line)")
    assert isinstance(numbered[2][1], InvalidLine)
    assert numbered[2][1].reason.startswith("not valid JSON")
    assert isinstance(numbered[3][1], Entity)


def test_numbered_records_read_lazily() -> None:
    read: list[int] = []

    def lines() -> Iterator[bytes]:
        for number, text in enumerate(GOOD * 1000, start=1):
            read.append(number)
            yield text.encode()

    records = numbered_records(lines(), TENANT)
    next(records)
    assert read == [1]


TRICKY = [
    *GOOD,
    '{"kind": "entity", "name": "Caf\\u00e9 \\ud83d\\ude00", "entity_type": "place"}',
    '{"kind": "entity", "name": "lone \\ud800", "entity_type": "place"}',
    '{"kind": "entity", "name": "a", "name": "b", "entity_type": "dup"}',
    '{"kind": "entity", "name": "a", "entity_type": "x", "properties": {"k": 1, "k": 1}}',
    '{"kind": "relationship", "relationship_type": "R", "source": {"name": "a", "type": "x"}, "target": {"name": "b", "type": "x"}, "confidence": "0.5"}',
    '{"kind": "relationship", "relationship_type": "R", "source": {"name": "a", "type": "x"}, "target": {"name": "b", "type": "x"}, "confidence": true}',
    '{"kind": "relationship", "relationship_type": "R", "source": {"name": "a", "type": "x"}, "target": {"name": "b", "type": "x"}, "confidence": 1}',
    '{"kind": "entity", "name": "n", "entity_type": "x", "properties": {"big": 123456789012345678901234567890, "f": 1e-320, "g": 0.1}}',
    '{"kind": "entity", "name": "n", "entity_type": "x", "properties": {"nan": NaN}}',
    '{"kind": "relationship", "relationship_type": "R", "source": {"name": "a", "type": "x"}, "target": {"name": "b", "type": "x"}, "confidence": NaN}',
    '{"kind": "relationship", "relationship_type": "R", "source": {"name": "a", "type": "x"}, "target": {"name": "b", "type": "x"}, "confidence": 1.5}',
    '{"kind": "relationship", "relationship_type": "R", "source": {"name": "a", "type": "x"}, "target": {"name": "A.", "type": "x"}}',
    '{"kind": "entity", "name": "n", "entity_type": "x", "extra": 1}',
    '{"kind": "entity", "name": "n", "entity_type": "x", "properties": {"p": {}}}',
    '{"kind": "entity", "name": "n", "entity_type": "x", "id": "not-a-uuid"}',
    '{"kind": "entity", "name": "n", "entity_type": "x"} trailing',
    "  ",
    "\ufeff" + GOOD[0],
]  # fmt: skip


def _outcome(text: str | bytes) -> object:
    try:
        return parse_line(text, 9, TENANT)
    except InvalidLineError as exc:
        return ("error", exc.reason)


@pytest.mark.parametrize("text", TRICKY)
def test_the_fast_path_agrees_with_the_checked_path(
    text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    fast = (_outcome(text), _outcome(text.encode("utf-8", "surrogatepass")))
    # A validator that refuses every line sends each one down the checked path.
    monkeypatch.setattr(jsonl, "_ANY_LINE", TypeAdapter(int))
    checked = (_outcome(text), _outcome(text.encode("utf-8", "surrogatepass")))
    assert fast == checked
