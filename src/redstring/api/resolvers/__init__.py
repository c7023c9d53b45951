"""Resolvers of the root fields: GraphQL arguments to composition calls, and results back."""
