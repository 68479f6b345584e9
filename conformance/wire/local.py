"""A server of the suite's own (the agents' recorder, the replay server): HTTP on 127.0.0.1 only, on a free port
unless one is given, served from a daemon thread; started and stopped by hand or as a context manager."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, TypeVar

S = TypeVar("S", bound="LocalServer")


class LocalServer:
    def __init__(self, handler: type[BaseHTTPRequestHandler], port: int = 0) -> None:
        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def host_url(self) -> str:
        """The server's root: http://127.0.0.1:PORT."""
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def start(self: S) -> S:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self: S) -> S:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()
