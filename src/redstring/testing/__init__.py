"""Compliance suites for the store ports, for any adapter to pass.

Subclass a suite in a test module and provide its fixture::

    class TestMyGraphStore(GraphStoreCompliance):
        @pytest.fixture
        def graph_store(self) -> GraphStore:
            return MyGraphStore()

Every test works in fresh random tenants (`new_tenant`), so a store shared
between tests (a server, say) is fine; `tenants_made` names them, for a fixture
to delete what a test wrote. Needs pytest and pytest-asyncio in auto mode.
pytest shows a failing assertion's values only in modules it rewrites: call
`pytest.register_assert_rewrite("redstring.testing")` in a `conftest.py` before
anything imports this package, or a suite's failure is a bare `AssertionError`.
"""

from redstring.testing.candidate_reader_compliance import (
    CandidateReaderCompliance,
    ReaderUnderTest,
)
from redstring.testing.doubles import (
    CountingGraphStore,
    CountingGraphStoreWithEnds,
    counting_graph_store,
)
from redstring.testing.factories import (
    make_entity,
    make_relationship,
    new_tenant,
    tenants_made,
)
from redstring.testing.graph_store_compliance import GraphStoreCompliance
from redstring.testing.vector_store_compliance import VectorStoreCompliance

__all__ = [
    "CandidateReaderCompliance",
    "CountingGraphStore",
    "CountingGraphStoreWithEnds",
    "GraphStoreCompliance",
    "ReaderUnderTest",
    "VectorStoreCompliance",
    "counting_graph_store",
    "make_entity",
    "make_relationship",
    "new_tenant",
    "tenants_made",
]
