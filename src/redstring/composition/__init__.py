"""Composition: the only layer holding an embedding provider, a vector store and a graph store."""
