"""The pure core of redstring: types and decisions, no I/O, no imports of other layers."""
