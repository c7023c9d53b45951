"""Adapters: one package per backend, each importing only ports and domain."""
