"""Run a bench module as `python -m` would, with every `uuid.uuid4()` it makes beginning
with a given prefix: `python -m tests.bench.prefixed_uuids PREFIX MODULE ARGS...`.

A bench names what it writes into Neo4j with `uuid4`: its tenants, and the run id its
own labels and schema carry. The prefix (8 hex digits) then marks all of it, so the
smoke test can find what a run left on a server that other clients use meanwhile
(`test_bench_smoke.RunTrace`). The rest of each UUID is random, its version and
variant kept. Child processes are not patched; the benches hand them their tenants.
"""

from __future__ import annotations

import re
import runpy
import sys
import uuid

PREFIX = re.compile(r"[0-9a-f]{8}")


def prefixed(prefix: str) -> None:
    """Make `uuid.uuid4` return UUIDs whose first 8 hex digits are `prefix`."""
    if not PREFIX.fullmatch(prefix):
        raise SystemExit(f"prefix must be 8 lowercase hex digits, not {prefix!r}")
    random_uuid = uuid.uuid4

    def uuid4() -> uuid.UUID:
        return uuid.UUID(prefix + random_uuid().hex[8:])

    uuid.uuid4 = uuid4


if __name__ == "__main__":
    prefix, module, *arguments = sys.argv[1:]
    prefixed(prefix)
    sys.argv = [module, *arguments]
    runpy.run_module(module, run_name="__main__", alter_sys=True)
