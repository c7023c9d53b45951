"""In-memory stores: the embedded default, and the reference the compliance suites pin."""

from redstring.adapters.memory.graph_store import InMemoryGraphStore
from redstring.adapters.memory.vector_store import InMemoryVectorStore

__all__ = ["InMemoryGraphStore", "InMemoryVectorStore"]
