"""What of a URL may be a secret: its userinfo (`user:password@`) and its query.

A URL given to redstring holds no user or password: credentials are given apart (a
Neo4j password, an API key), and kept out of logs, where a URL is written to logs and
messages. A URL that is quoted is quoted by `shown_url`, without userinfo or query.
"""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

# Why a URL with a user or password in it is refused, whichever setting holds it.
USERINFO_REFUSED = "a user or password is given apart, not in it"


def holds_userinfo(url: str) -> bool:
    """Whether `url` has a user or password before its host (an empty one included)."""
    parts = urlsplit(url)
    return parts.username is not None or parts.password is not None


def shown_url(url: str) -> str:
    """`url` as a log line or message may quote it: its scheme, host, port and path, without
    userinfo, query or fragment (`http://h:8080/v1` of `http://u:pw@h:8080/v1?key=k`)."""
    parts = urlsplit(url)
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit((parts.scheme, host, parts.path, "", ""))
