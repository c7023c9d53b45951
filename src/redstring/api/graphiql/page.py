"""`graphiql_page`: the HTML that `GET /graphql` answers a browser with."""

from __future__ import annotations

import html
import json
import logging
from pathlib import Path
from string import Template

from redstring.api.demo import DEMO_TENANT_ID
from redstring.api.graphiql.assets import (
    INSTALL_DIR,
    SCRIPTS,
    STYLES,
    AssetSource,
    missing_assets,
)

logger = logging.getLogger("redstring.api")

DEFAULT_QUERY = f"""# redstring: a query string in, ranked entities out, with their graph edges.
# Ctrl-Enter runs the query. The tenant below is the demo one (`redstring serve --demo`).
{{
  retrieve(query: "ACME Corporation", tenantId: "{DEMO_TENANT_ID}", k: 5) {{
    matches {{
      score semantic lexical
      entity {{
        name entityType
        relationships(first: 5) {{ source {{ name }} relationshipType target {{ name }} }}
      }}
    }}
  }}
}}
"""


def _template(name: str) -> Template:
    return Template(Path(__file__).with_name(name).read_text(encoding="utf-8"))


def _script_literal(value: str) -> str:
    """`value` as a JavaScript string literal that cannot close the `<script>` element."""
    return json.dumps(value).replace("</", "<\\/")


def graphiql_page(source: AssetSource, install_dir: Path = INSTALL_DIR) -> str:
    """GraphiQL loading its files from `source`, each with its integrity hash; the
    same for every request, so an app renders it once.

    With `local` and files missing, a page saying so and how to install them
    (logged too), rather than a GraphiQL that never loads.
    """
    if source is AssetSource.LOCAL and (missing := missing_assets(install_dir)):
        logger.warning(
            "GraphiQL's files are missing from %s (run `make graphiql`, "
            "or set REDSTRING_GRAPHIQL_ASSETS=cdn): %s",
            install_dir,
            ", ".join(asset.name for asset in missing),
        )
        return _template("missing.html").substitute(
            install_dir=html.escape(str(install_dir)),
            missing="\n".join(
                f"      <li><code>{html.escape(asset.name)}</code></li>" for asset in missing
            ),
        )
    styles = "\n".join(
        f'    <link rel="stylesheet" href="{html.escape(a.url(source))}"'
        f' integrity="{a.integrity}" crossorigin="anonymous" />'
        for a in STYLES
    )
    scripts = "\n".join(
        f'    <script src="{html.escape(a.url(source))}"'
        f' integrity="{a.integrity}" crossorigin="anonymous"></script>'
        for a in SCRIPTS
    )
    return _template("page.html").substitute(
        styles=styles, scripts=scripts, default_query=_script_literal(DEFAULT_QUERY)
    )
