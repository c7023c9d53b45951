"""`open_services` on a real Neo4j: what it warns of in a choice it accepts."""

from __future__ import annotations

import logging

import pytest

from redstring.api.settings import Settings
from redstring.api.startup import open_services


async def test_the_hashing_provider_on_neo4j_is_logged_as_a_warning(
    neo4j_auth: tuple[str, tuple[str, str]], caplog: pytest.LogCaptureFixture
) -> None:
    uri, (user, password) = neo4j_auth
    settings = Settings(backend="neo4j", neo4j_uri=uri, neo4j_user=user, neo4j_password=password)
    with caplog.at_level(logging.WARNING, logger="redstring.api"):
        services = await open_services(settings)
        await services.aclose()
    [record] = [r for r in caplog.records if "hashing provider with Neo4j" in r.getMessage()]
    assert record.levelno == logging.WARNING
