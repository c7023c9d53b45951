"""Ports: the Protocols that stores and embedding providers implement."""
