"""`RequestRecord`: what is known about the HTTP request being served, for its log line
and metrics; and the rules for its request id.

The access log middleware (`access_log.py`) opens a record per request in a
context variable; code serving the request adds to it without being handed
anything: the endpoint notes the authenticated caller, `authorized_tenant` the tenant, `RecordOperation` (a schema
extension) the operation's name and error codes, and a refusal its code. Tasks
the request starts copy the context, so they note into the same record.
"""

from __future__ import annotations

import contextlib
import re
import uuid
from collections.abc import Iterable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field

from strawberry.extensions import SchemaExtension

from redstring.domain.ids import TenantId

REQUEST_ID_HEADER = "x-request-id"
_SANE_REQUEST_ID = re.compile(r"[A-Za-z0-9._-]{1,128}")

ANONYMOUS = "anonymous"  # an operation without a name
OTHER = "other"  # a name that is not a GraphQL name of at most 64 characters
_OPERATION_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")


def operation_label(name: str | None) -> str:
    """An operation's name as logged and counted: `anonymous` without one, `other`
    for a name that is not a GraphQL name of at most 64 characters (`operationName`
    is the client's free text), else the name."""
    if not name:
        return ANONYMOUS
    return name if _OPERATION_NAME.fullmatch(name) else OTHER


def request_id_from(header: str | None) -> str:
    """The client's request id when it is sane (1 to 128 of `A-Za-z0-9._-`), else a new
    one (a uuid4 in hex): an id goes into every log line and response header, so
    one that could forge a log field or bloat a header is replaced, not trusted."""
    if header is not None and _SANE_REQUEST_ID.fullmatch(header):
        return header
    return uuid.uuid4().hex


@dataclass
class RequestRecord:
    """One request as its log line reports it. `operation` is `None` until a GraphQL
    operation has run, then its `operation_label`."""

    request_id: str
    operation: str | None = None
    tenant: TenantId | None = None
    caller: str | None = None
    error_codes: list[str] = field(default_factory=list)


_current: ContextVar[RequestRecord | None] = ContextVar("redstring_request", default=None)


def current_record() -> RequestRecord | None:
    """The record of the request being served, or `None` outside one."""
    return _current.get()


def current_request_id() -> str | None:
    """The id of the request being served, or `None` outside one."""
    record = _current.get()
    return None if record is None else record.request_id


@contextlib.contextmanager
def opened_record(request_id: str) -> Iterator[RequestRecord]:
    """A new record, the current one inside the `with` block."""
    record = RequestRecord(request_id)
    token = _current.set(record)
    try:
        yield record
    finally:
        _current.reset(token)


def note_tenant(tenant: TenantId) -> None:
    """Remember the first tenant a resolver of this request was authorised to use."""
    record = _current.get()
    if record is not None and record.tenant is None:
        record.tenant = tenant


def note_caller(subject: str | None) -> None:
    """Remember who the request's credentials name (a JWT's `sub`, `key <id>`)."""
    record = _current.get()
    if record is not None:
        record.caller = subject


def note_error_codes(codes: Iterable[str]) -> None:
    """Remember the error codes of this request's response, in order, once each."""
    record = _current.get()
    if record is not None:
        for code in codes:
            if code not in record.error_codes:
                record.error_codes.append(code)


class RecordOperation(SchemaExtension):
    """Notes the operation's name and the codes of its errors in the request's record.

    Listed before `ErrorCodes`, so that it leaves the operation after it and sees
    the errors with their public codes. The name is noted however the operation ends,
    a cancellation included (the request's deadline, a client gone): the name is read
    once the operation has left, its document parsed if it could be.
    """

    def on_operation(self) -> Iterator[None]:
        try:
            yield
        finally:
            self._noted()

    def _noted(self) -> None:
        record = _current.get()
        if record is None:
            return
        context = self.execution_context
        record.operation = operation_label(context.operation_name)
        result = context.result
        if result is not None and result.errors:
            note_error_codes(str((error.extensions or {}).get("code")) for error in result.errors)
