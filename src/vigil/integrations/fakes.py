"""Shared machinery for loopback vendor fakes: request recording, "fail the next N requests" injection and
switchable faults (``vigil.integrations.fake_faults``).

Each vendor fake is a real HTTP server (run by ``vigil.integrations.live_server.LiveServer``) that checks credentials
the way the vendor does and answers with the vendor's documented bodies.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Awaitable, Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, TypeVar, cast, get_args, get_origin
from urllib.parse import parse_qs

from fastapi.testclient import TestClient
from pydantic import BaseModel, ConfigDict
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from vigil.integrations.catalog import get_integration
from vigil.integrations.fake_faults import Fault, FaultRule, faulty_answer
from vigil.integrations.live_server import LiveServer

Handler = Callable[[Request], Awaitable[Response]]


@dataclass(frozen=True)
class RecordedRequest:
    """One request exactly as the fake received it (header names lower-cased)."""

    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes
    at: float

    @property
    def params(self) -> dict[str, str]:
        """Query parameters with one value each (the last one)."""
        return {key: values[-1] for key, values in self.query.items()}

    def json(self) -> Any:
        return json.loads(self.body)

    def form(self) -> dict[str, str]:
        return {key: values[-1] for key, values in parse_qs(self.body.decode(), keep_blank_values=True).items()}


@dataclass
class InjectedFailure:
    status: int
    body: Any
    headers: dict[str, str] = field(default_factory=dict)
    path_contains: str | None = None
    plain_text: bool = False


class FakeVendor(ABC):
    """Base class: subclasses list their routes with ``self.route``; every request is recorded first."""

    def __init__(self) -> None:
        self.url = ""
        self.requests: list[RecordedRequest] = []
        self._failures: deque[InjectedFailure] = deque()
        self._faults: list[FaultRule] = []
        self._lock = threading.Lock()
        #: Seconds every request waits before it is answered, as a distant vendor would (benchmarks); 0 = none.
        self.latency_seconds = 0.0

    # --- test controls -------------------------------------------------------------------------------------
    def reset(self) -> None:
        self.clear_faults()
        with self._lock:
            self.requests.clear()
            self._failures.clear()
        self.latency_seconds = 0.0

    def inject(self, mode: Fault, *, match: str | None = None, retry_after: str | None = None) -> FaultRule:
        """Answer every request whose path, query or body contains ``match`` (all when None) with ``mode`` until
        the fault is cleared; the rule counts the requests it caught. The earliest matching rule wins."""
        rule = FaultRule(mode, match, retry_after)
        with self._lock:
            self._faults.append(rule)
        return rule

    def clear_faults(self) -> None:
        """Switch every fault off (requests held by a hang or a slow body are let go)."""
        with self._lock:
            for rule in self._faults:
                rule.active = False
            self._faults.clear()

    def fail_next(
        self,
        count: int = 1,
        *,
        status: int,
        body: Any = None,
        headers: dict[str, str] | None = None,
        path_contains: str | None = None,
        plain_text: bool = False,
    ) -> None:
        """Answer the next ``count`` matching requests with this documented error instead of the real handler."""
        with self._lock:
            for _ in range(count):
                self._failures.append(InjectedFailure(status, body, dict(headers or {}), path_contains, plain_text))

    def requests_to(self, path_fragment: str, method: str | None = None) -> list[RecordedRequest]:
        return [r for r in self.requests if path_fragment in r.path and (method is None or r.method == method)]

    # --- server plumbing -----------------------------------------------------------------------------------
    @abstractmethod
    def routes(self) -> list[Route]:
        """The vendor's endpoints, each built with ``self.route`` so it is recorded and can be failed."""

    def route(self, path: str, handler: Handler, methods: list[str]) -> Route:
        async def endpoint(request: Request) -> Response:
            body = await request.body()
            recorded = RecordedRequest(
                method=request.method,
                path=request.url.path,
                query=parse_qs(request.url.query, keep_blank_values=True),
                headers={k.lower(): v for k, v in request.headers.items()},
                body=body,
                at=time.monotonic(),
            )
            with self._lock:
                self.requests.append(recorded)
                fault = self._fault_for(recorded, request.url.query)
                failure = None if fault is not None else self._take_failure(recorded.path)
            if fault is not None:
                return await faulty_answer(fault, request)
            if self.latency_seconds > 0:
                await asyncio.sleep(self.latency_seconds)
            if failure is not None:
                if failure.plain_text:
                    return PlainTextResponse(str(failure.body), failure.status, headers=failure.headers)
                return JSONResponse(failure.body, failure.status, headers=failure.headers)
            return await handler(request)

        return Route(path, endpoint, methods=methods)

    def _fault_for(self, recorded: RecordedRequest, query: str) -> FaultRule | None:
        for rule in self._faults:
            if rule.matches(recorded.path, query, recorded.body):
                rule.hits += 1
                return rule
        return None

    def _take_failure(self, path: str) -> InjectedFailure | None:
        for failure in self._failures:
            if failure.path_contains is None or failure.path_contains in path:
                self._failures.remove(failure)
                return failure
        return None

    def app(self) -> Starlette:
        return Starlette(routes=self.routes())

    @contextmanager
    def serve(self) -> Iterator[FakeVendor]:
        with LiveServer(self.app()) as server:
            self.url = server.url
            yield self


class StatefulFakeVendor(FakeVendor):
    """A vendor fake whose records and controls are all set by ``reset()``, so a new one starts as a reset one."""

    def __init__(self) -> None:
        super().__init__()
        self.reset()


async def form_of(request: Request) -> dict[str, str]:
    """An urlencoded body as a dict (python-multipart is not a dependency; the token and chat APIs faked here
    take urlencoded forms only)."""
    return {k: v[-1] for k, v in parse_qs((await request.body()).decode(), keep_blank_values=True).items()}


# --- what an evaluation scenario drives ----------------------------------------------------------------------


class ScenarioData(BaseModel):
    """A scenario's ``integrations.<id>`` section: what the vendor's fake returns (no section: not connected)."""

    model_config = ConfigDict(extra="forbid")


DataT = TypeVar("DataT", bound=ScenarioData)
FakeT = TypeVar("FakeT", bound=FakeVendor)


class ScenarioFakeError(Exception):
    """The fake could not do what the scenario asked (e.g. the question has no button for the scripted answer)."""


class ScenarioFake(ABC, Generic[FakeT, DataT]):
    """One vendor's fake as an evaluation scenario drives it; its folder's ``fake.py`` names its subclass
    ``SCENARIO_FAKE``. A subclass, ``ScenarioFake[TheFake, ItsSectionModel]``, states the integration id, how to
    load a scenario's section into the fake and connect to it; Vigil reaches it at every base URL the integration
    declares."""

    integration_id: ClassVar[str]
    #: The fake's class and the scenario section's model, as the subclass's type arguments name them.
    fake_type: ClassVar[type[FakeVendor]]
    data_model: ClassVar[type[ScenarioData]]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for base in getattr(cls, "__orig_bases__", ()):
            arguments = get_args(base)
            if issubclass(get_origin(base) or object, ScenarioFake) and not isinstance(arguments[0], TypeVar):
                cls.fake_type, cls.data_model = arguments

    def __init__(self) -> None:
        self.fake = cast("FakeT", self.fake_type())

    @abstractmethod
    def connection_values(self) -> dict[str, str]:
        """The connection fields to create through the API so that they authenticate at this fake."""

    def load(self, data: DataT) -> None:
        """Serve the scenario's section (called after ``reset``); by default the fake serves its own records."""

    def base_url(self) -> str:
        """Where the fake serves what the integration's base URLs point at."""
        return self.fake.url

    def vendor_urls(self) -> dict[str, str]:
        """``VIGIL_VENDOR_URLS`` entries pointing each base URL the integration declares at this fake (none: a
        connection field carries the URL)."""
        return {url.key: self.base_url() for url in get_integration(self.integration_id).base_urls}

    def write_requests(self) -> list[str]:
        """Requests received that would have changed something at the vendor, one label each."""
        return []

    def reset(self) -> None:
        self.fake.reset()

    def serve(self) -> AbstractContextManager[FakeVendor]:
        return self.fake.serve()


@dataclass(frozen=True)
class AskedQuestion:
    """A checkpoint question as a chat fake received it: the checkpoint its answers carry, and whom it went to."""

    checkpoint_id: str | None
    """The checkpoint id the question's answer buttons carry (None: it carries none)."""
    recipient: str
    """The e-mail of the person in whose direct conversation it was posted, else the conversation's id."""


class ChatScenarioFake(ScenarioFake[FakeT, DataT]):
    """The fake of an integration that asks people questions (``Integration.chat``): it knows the scenario's
    people, shows whether Vigil's question has arrived, records whom each question went to, and answers it as the
    asked person would."""

    @abstractmethod
    def add_people(self, emails: list[str]) -> list[str]:
        """Make each address a user of the chat workspace; returns the ones added (for ``remove_people``)."""

    @abstractmethod
    def remove_people(self, emails: list[str]) -> None: ...

    @abstractmethod
    def questions_asked(self) -> list[AskedQuestion]:
        """Every checkpoint question received since the last ``reset``, in order, with whom it went to."""

    @abstractmethod
    def question_posted(self, message_ref: str | None, recipient_id: str) -> bool:
        """Whether the question stored under ``message_ref`` (as the chat provider recorded it) is in the fake."""

    @abstractmethod
    def answer(self, client: TestClient, token: str, message_ref: str | None, recipient_id: str, decision: str) -> None:
        """Deliver ``recipient_id``'s answer ``decision`` to the question to Vigil's inbound chat endpoint through
        ``client``, signed and shaped as the vendor delivers it (``token``: the connection's ``webhook_token``).
        Raises ``ScenarioFakeError`` when the question offers no such answer or Vigil refuses the delivery."""
