"""The Strawberry schema: types, inputs, the `Query` and `Mutation` roots, and `build_schema`."""
