"""`check_neo4j_uri`: a Neo4j URI refused before a driver is made, not inside it.

The driver refuses what it cannot take only when it is built (a scheme, a user in the
URI) or when it first connects (a port that is no number); both were tracebacks of a
command. A path or a fragment it ignores (with a deprecation warning; its 7.0 refuses
them), so a database named as a path was never used. Checked here, without the
driver, a URI is refused as a setting like any other.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from redstring.domain.errors import InvalidInputError
from redstring.domain.url_secrets import USERINFO_REFUSED, holds_userinfo

# The schemes of Bolt, direct (`bolt`) or routing (`neo4j`), plain, TLS (`+s`) or TLS
# trusting any certificate (`+ssc`); the driver's HTTP ones reach no Bolt server.
NEO4J_URI_SCHEMES = ("bolt", "bolt+s", "bolt+ssc", "neo4j", "neo4j+s", "neo4j+ssc")


def check_neo4j_uri(uri: str) -> str:
    """`uri` when the Neo4j driver can connect with it, else `InvalidInputError` saying
    why, without repeating the URI (it may hold a password)."""
    why = _fault(uri)
    if why is not None:
        raise InvalidInputError(f"not a Neo4j URI such as bolt://HOST:7687: {why}")
    return uri


def _fault(uri: str) -> str | None:
    schemes = ", ".join(NEO4J_URI_SCHEMES)
    parts = urlsplit(uri)
    if not parts.scheme or not uri.lower().startswith(f"{parts.scheme}://"):
        return f"it has no scheme, one of {schemes}"
    if parts.scheme not in NEO4J_URI_SCHEMES:
        return f"its scheme {parts.scheme!r} is none of {schemes}"
    if holds_userinfo(uri):
        return USERINFO_REFUSED
    if not parts.hostname:
        return "it names no host"
    try:
        port = parts.port
    except ValueError:  # not digits, or above 65535
        port = 0
    if port == 0:
        return "its port is no number from 1 to 65535"
    if parts.path not in ("", "/"):  # the driver ignores it, and uses the default database
        return (
            "it takes no path: a database is named apart, by REDSTRING_NEO4J_DATABASE "
            "(Redstring.neo4j's database)"
        )
    if "#" in uri:  # ignored by the driver, as a path is; empty too
        return "it takes no fragment (#...)"
    if parts.query and parts.scheme.startswith("bolt"):
        return "a bolt URI takes no query (a neo4j one's routing context)"
    return None
