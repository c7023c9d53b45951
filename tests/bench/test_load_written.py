"""`bench.load` records the ids its clients upsert as they go, so that the run deletes
them from the write tenant even when the clients' process fails."""

from __future__ import annotations

import random
import uuid
from pathlib import Path

from bench.load import Plan, request_body, written_ids

from redstring import TenantId
from redstring.domain.ids import entity_id_for


def plan(written: Path) -> Plan:
    return Plan(
        base_url="http://127.0.0.1:9",
        headers={},
        tenant=str(uuid.uuid4()),
        write_tenant=str(uuid.uuid4()),
        queries=["Acme"],
        clients=1,
        start_at=0.0,
        seconds=0.0,
        progress=1.0,
        label="test",
        written=written,
    )


def test_an_upserts_ids_are_on_file_before_it_is_sent(tmp_path: Path) -> None:
    run = plan(tmp_path / "written.txt")
    tenant = TenantId(uuid.UUID(run.write_tenant))
    rng = random.Random(1)
    with run.written.open("a", encoding="utf-8") as written:
        first = request_body("upsert", rng, run, written)
        # Read while the file is still open: what a failed process leaves behind.
        expected = [
            str(entity_id_for(tenant, e["entityType"], e["name"]))
            for e in first["variables"]["entities"]
        ]
        assert written_ids(run.written) == expected
        second = request_body("upsert", rng, run, written)
        expected += [
            str(entity_id_for(tenant, e["entityType"], e["name"]))
            for e in second["variables"]["entities"]
        ]
        assert written_ids(run.written) == expected
        request_body("retrieve", rng, run, written)
        assert written_ids(run.written) == expected  # a read writes nothing
    assert len(set(expected)) == 20


def test_no_file_is_no_ids(tmp_path: Path) -> None:
    assert written_ids(tmp_path / "never-written.txt") == []
