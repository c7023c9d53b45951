"""GraphiQL on `GET /graphql`, its browser files served by the server itself or by a CDN.

The files come from pinned npm packages (`package.json` beside this file),
installed by `make graphiql` into `node_modules/` here, never at run time;
the build hook (`hatch_build.py`) puts the few the page loads, with their
licences, into the sdist and wheel at the same place.
`assets.py` names the few files the page loads, with their Subresource
Integrity hashes: a browser runs only the pinned bytes, wherever they came from.
"""

from redstring.api.graphiql.assets import ASSETS, INSTALL_DIR, Asset, AssetSource, missing_assets
from redstring.api.graphiql.page import graphiql_page
from redstring.api.graphiql.route import asset_route

__all__ = [
    "ASSETS",
    "INSTALL_DIR",
    "Asset",
    "AssetSource",
    "asset_route",
    "graphiql_page",
    "missing_assets",
]
