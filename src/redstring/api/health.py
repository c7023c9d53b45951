"""`/healthz` (the process answers) and `/readyz` (its stores answer), for orchestrators."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from starlette.requests import Request
from starlette.responses import JSONResponse

from redstring.composition.services import Services

logger = logging.getLogger("redstring.api")


def healthz_endpoint(auth: str) -> Callable[[Request], Awaitable[JSONResponse]]:
    """An endpoint answering 200 whenever the process can answer HTTP at all, with the
    authentication mode `auth` (so `none` on a shared host is seen, not guessed)."""

    async def healthz(request: Request) -> JSONResponse:
        return JSONResponse({"status": "ok", "auth": auth})

    return healthz


def readyz_endpoint(
    services: Callable[[], Services], timeout: float
) -> Callable[[Request], Awaitable[JSONResponse]]:
    """An endpoint answering 200 when the stores answer a cheap read within `timeout`
    seconds, else 503; the cause is logged, not shown."""

    async def readyz(request: Request) -> JSONResponse:
        try:
            await asyncio.wait_for(services().check_ready(), timeout)
        except Exception:
            logger.warning("readiness check failed", exc_info=True)
            return JSONResponse({"status": "unavailable"}, status_code=503)
        return JSONResponse({"status": "ready"})

    return readyz
