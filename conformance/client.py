"""The only I/O of the suite: send one request with httpx, record the exchange exactly.

Every request has limits per phase (connect, between reads, total) and a byte cap: an endless,
stalled or giant response ends as an ``Exchange`` whose ``observations.aborted`` says why,
never as a hang or an exception.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import httpx

from conformance.exchange import Exchange
from conformance.model import Intent
from conformance.model.observations import Observations
from conformance.wire.errors import WireError
from conformance.wire.sse import SSEDecoder

DEFAULT_MAX_BYTES = 32 * 1024 * 1024


@dataclass(frozen=True)
class Limits:
    """Time limits in seconds and a byte cap for one response."""

    connect: float = 5.0
    first_byte: float = 60.0
    idle: float = 30.0
    total: float = 120.0
    max_bytes: int = DEFAULT_MAX_BYTES

    def timeout(self) -> httpx.Timeout:
        return httpx.Timeout(connect=self.connect, read=max(self.first_byte, self.idle), write=self.idle,
                             pool=self.connect)


@dataclass
class Request:
    """What to send. ``body`` (JSON) or ``content`` (raw bytes, for malformed input)."""

    method: str = "POST"
    path: str = "/v1/chat/completions"
    body: Any = None
    content: bytes | None = None
    headers: dict[str, str] = field(default_factory=dict)
    intent: Intent | None = None
    scenario: str = "live"
    stop_after_events: int | None = None  # disconnect after this many SSE events
    first_event: threading.Event | None = None  # set when the first SSE event has arrived
    arrived: threading.Semaphore | None = None  # released when the stream stops reading (burst scenarios)
    hold: threading.Event | None = None  # wait for this before disconnecting (burst scenarios)

    def encoded(self) -> bytes | None:
        if self.content is not None:
            return self.content
        if self.body is not None:
            return json.dumps(self.body).encode()
        return None


def request_headers(req: Request, api_key: str | None = None) -> dict[str, str]:
    """The headers sent: the request's own, a JSON Content-Type for a body, the bearer key."""
    headers = dict(req.headers)
    has_body = req.content is not None or req.body is not None
    if has_body and not any(k.lower() == "content-type" for k in headers):
        headers["Content-Type"] = "application/json"
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    return headers


def join_url(base_url: str, path: str) -> str:
    """``base_url`` is normalized to end without /v1; ``path`` starts with / and names /v1 itself."""
    return base_url.rstrip("/") + path


def record(client: httpx.Client, base_url: str, req: Request, limits: Limits | None = None,
           api_key: str | None = None) -> Exchange:
    """Send ``req`` and record the exchange; never raises for what the server does."""
    limits = limits or Limits()
    headers = request_headers(req, api_key)
    content = req.encoded()
    observations: dict[str, Any] = {}  # built here, typed once at the end
    arrivals: list[tuple[float, int]] = []
    body = bytearray()
    status: int | None = None
    resp_headers: tuple[tuple[str, str], ...] = ()
    version = "HTTP/1.1"
    start = time.monotonic()
    try:
        with client.stream(req.method, join_url(base_url, req.path), content=content, headers=headers,
                           timeout=limits.timeout()) as response:
            status = response.status_code
            resp_headers = tuple((k.decode("latin-1").lower(), v.decode("latin-1"))
                                 for k, v in response.headers.raw)
            version = response.http_version
            observations.update(_read_body(response, body, arrivals, start, limits, req))
    except httpx.ConnectError as exc:
        observations["aborted"] = "connect error"
        observations["error"] = str(exc)[:200]
    except httpx.TimeoutException as exc:
        observations["aborted"] = "first-byte timeout" if status is None else "idle timeout"
        observations["error"] = type(exc).__name__
    except httpx.HTTPError as exc:
        observations["aborted"] = "transport error"
        observations["error"] = f"{type(exc).__name__}: {exc}"[:200]
    observations["elapsed_s"] = round(time.monotonic() - start, 4)
    return Exchange(
        request=req.body, body=bytes(body), status=status, headers=resp_headers,
        method=req.method, path=req.path, request_headers=tuple((k.lower(), v) for k, v in headers.items()),
        http_version=version, arrivals=tuple(arrivals), intent=req.intent, scenario=req.scenario,
        observations=Observations.from_json(observations),
    )


def _read_body(response: httpx.Response, body: bytearray, arrivals: list[tuple[float, int]], start: float,
               limits: Limits, req: Request) -> dict[str, Any]:
    watch = req.stop_after_events is not None or req.first_event is not None
    events = SSEDecoder() if watch else None
    seen = 0
    for piece in response.iter_bytes():
        body += piece
        now = time.monotonic() - start
        arrivals.append((round(now, 4), len(body)))
        if len(body) > limits.max_bytes:
            return {"aborted": "byte cap"}
        if now > limits.total:
            return {"aborted": "total timeout"}
        if events is not None:
            try:
                seen += len(events.feed(piece))
            except WireError:  # a giant line: the checks report it from the body
                return {"aborted": "line cap"}
            if seen and req.first_event is not None:
                req.first_event.set()
            if req.stop_after_events is not None and seen >= req.stop_after_events:
                if req.arrived is not None and req.hold is not None:
                    req.arrived.release()
                    req.hold.wait(limits.idle)
                return {"disconnected_after_events": seen}
    if req.first_event is not None:
        req.first_event.set()
    return {}
