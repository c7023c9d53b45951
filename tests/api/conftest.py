"""Fixtures for the API tests: demo services in memory and clients over ASGI."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable

import httpx
import pytest

from redstring.api import create_app
from redstring.api.demo import load_demo
from redstring.api.settings import Settings
from redstring.composition.client import Redstring
from tests.api.support import GraphQLClient, memory_services

MakeClient = Callable[..., GraphQLClient]


@pytest.fixture(scope="session")
def demo_services() -> Redstring:
    """Shared demo data, read only: tests that write use a fresh tenant or fresh services."""
    services = memory_services()
    asyncio.run(load_demo(services))
    return services


@pytest.fixture
def fresh_services() -> Redstring:
    return memory_services()


@pytest.fixture
async def make_client() -> AsyncIterator[MakeClient]:
    """Builds clients over `create_app(settings, services=...)`, closed at teardown."""
    opened: list[httpx.AsyncClient] = []

    def build(services: Redstring, settings: Settings | None = None) -> GraphQLClient:
        app = create_app(settings or Settings(), services=services)
        http = httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1"
        )
        opened.append(http)
        return GraphQLClient(http)

    yield build
    for http in opened:
        await http.aclose()


@pytest.fixture
def client(make_client: MakeClient, demo_services: Redstring) -> GraphQLClient:
    return make_client(demo_services)
