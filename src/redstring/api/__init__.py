"""The GraphQL API: Strawberry schema, Starlette app, and the `redstring` command line."""

from typing import TYPE_CHECKING

from redstring.exports import imported_on_use

if TYPE_CHECKING:
    from redstring.api.app import create_app
    from redstring.api.schema.build import build_schema, schema_sdl
    from redstring.api.settings import Settings

__all__ = ["Settings", "build_schema", "create_app", "schema_sdl"]

# Where each exported name lives, imported on first use (as `redstring`'s names are).
_HOMES: dict[str, str] = {
    "create_app": "redstring.api.app",
    "build_schema": "redstring.api.schema.build",
    "schema_sdl": "redstring.api.schema.build",
    "Settings": "redstring.api.settings",
}


if not TYPE_CHECKING:  # a type checker reads the imports above
    __getattr__, __dir__ = imported_on_use(__name__, _HOMES, globals())
