"""Run an ASGI app on a real loopback port in a background thread (for Vigil itself and the vendor fakes)."""

from __future__ import annotations

import threading
import time
from types import TracebackType
from typing import Any

import uvicorn


class LiveServer:
    """A uvicorn server on 127.0.0.1 with an OS-chosen port, started and stopped as a context manager."""

    def __init__(self, app: Any, host: str = "127.0.0.1", startup_timeout: float = 15.0) -> None:
        self._config = uvicorn.Config(app, host=host, port=0, log_level="warning", lifespan="auto")
        self._server = uvicorn.Server(self._config)
        self._thread = threading.Thread(target=self._server.run, name="live-server", daemon=True)
        self._startup_timeout = startup_timeout
        self.host = host
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def __enter__(self) -> LiveServer:
        self._thread.start()
        deadline = time.monotonic() + self._startup_timeout
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("live server did not start")
            time.sleep(0.01)
        self.port = self._server.servers[0].sockets[0].getsockname()[1]
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10)
