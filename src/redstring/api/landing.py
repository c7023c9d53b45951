"""`landing_routes`: what a browser asks a server for before any API call, `/` and
`/favicon.ico`.

`GET /` redirects (307) to `/graphql`, where a browser gets GraphiQL, so the bare
address a user types leads somewhere. `GET /favicon.ico` answers the package's own
icon (an SVG, `favicon.svg` beside this module: a red thread through three nodes),
which GraphiQL's page links too. Neither needs credentials: authentication applies
to `/graphql` operations only.
"""

from __future__ import annotations

from pathlib import Path

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

FAVICON = Path(__file__).with_name("favicon.svg")
FAVICON_PATH = "/favicon.ico"
GRAPHQL_PATH = "/graphql"
# The icon changes only with the package: a day in the cache spares a request per page.
FAVICON_CACHE_CONTROL = "public, max-age=86400"


def landing_routes() -> list[Route]:
    """`GET /` (307 to `/graphql`) and `GET /favicon.ico` (the SVG icon); the icon is
    read once, here."""
    icon = FAVICON.read_bytes()

    async def root(request: Request) -> Response:
        return RedirectResponse(GRAPHQL_PATH, status_code=307)

    async def favicon(request: Request) -> Response:
        return Response(
            icon,
            media_type="image/svg+xml",
            headers={"cache-control": FAVICON_CACHE_CONTROL},
        )

    return [
        Route("/", root, methods=["GET", "HEAD"]),
        Route(FAVICON_PATH, favicon, methods=["GET", "HEAD"]),
    ]
