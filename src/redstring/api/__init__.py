"""The GraphQL API: Strawberry schema, Starlette app, and the `redstring` command line."""

from redstring.api.app import create_app
from redstring.api.schema.build import build_schema, schema_sdl
from redstring.api.settings import Settings

__all__ = ["Settings", "build_schema", "create_app", "schema_sdl"]
