"""`asset_route`: serves the pinned GraphiQL files, and nothing else, under `/graphiql/`."""

from __future__ import annotations

from pathlib import Path

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.routing import Route

from redstring.api.graphiql.assets import ASSETS, INSTALL_DIR, ROUTE_PREFIX

# The URL names the exact package version, so a browser may keep the file for good.
CACHE_CONTROL = "public, max-age=31536000, immutable"


def asset_route(install_dir: Path = INSTALL_DIR) -> Route:
    """A route answering `GET /graphiql/{package@version/path}` for the files of `ASSETS`.

    Only the listed names are served (looked up, never joined onto a path),
    so no request can reach any other file.
    """
    by_name = {asset.name: asset for asset in ASSETS}

    async def serve_asset(request: Request) -> Response:
        asset = by_name.get(request.path_params["name"])
        if asset is None or not asset.file(install_dir).is_file():
            raise HTTPException(404)  # answered as every unknown path is (`refusals`)
        return FileResponse(
            asset.file(install_dir),
            media_type=asset.media_type,
            headers={"cache-control": CACHE_CONTROL},
        )

    return Route(f"/{ROUTE_PREFIX}/{{name:path}}", serve_asset, methods=["GET", "HEAD"])
