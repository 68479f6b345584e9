"""Adversarial replay: recorded fixtures served as if by a server, their bytes re-cut and re-timed.

A client under test points its base URL at the replay server (127.0.0.1 only). Every chat request
is answered with the current fixture's status, headers and exact body, cut as ``chunking`` says:
``whole`` (one write), ``bytes`` (one byte per write), ``random`` (random cuts from ``seed``) or
``adversarial`` (cuts between CR and LF, inside UTF-8 sequences and right after ``data:``, with
short stalls). ``cuts`` overrides the chunking with explicit cut points (fuzz-client's Hypothesis
search sets them). With ``keepalive``, a ``: keep-alive`` comment goes after every event, where the
WHATWG algorithm ignores it, so a correct client assembles the same message; with ``stall``, the
server falls silent for that many seconds after every event. The body is
close-delimited, so every cut reaches the client as its own read.
"""

from __future__ import annotations

import json
import random
import time
from http.server import BaseHTTPRequestHandler
from typing import Any

from conformance.fixtures import Fixture
from conformance.fuzz.strategies import nasty_cuts
from conformance.wire.body import whole
from conformance.wire.local import LocalServer
from conformance.wire.sse import pieces

CHUNKINGS = ("whole", "bytes", "random", "adversarial")


def cut(body: bytes, chunking: str, seed: int = 0) -> list[bytes]:
    """The body's pieces for one chunking."""
    if chunking == "whole" or len(body) < 2:
        return [body]
    if chunking == "bytes":
        return [body[i:i + 1] for i in range(len(body))]
    rng = random.Random(seed)
    if chunking == "random":
        count = rng.randint(1, max(1, len(body) // 8))
        return pieces(body, sorted(rng.sample(range(1, len(body)), min(count, len(body) - 1))))
    if chunking == "adversarial":
        return pieces(body, nasty_cuts(body))
    raise ValueError(f"unknown chunking {chunking!r}; choose from {', '.join(CHUNKINGS)}")


def event_ends(body: bytes) -> list[int]:
    """The offsets right after each event's blank line."""
    from conformance.wire.sse import SSEDecoder

    ends, last = [], 0
    for event in SSEDecoder().feed(body):
        if last < event.end <= len(body):
            ends.append(event.end)
            last = event.end
    return ends


def with_keepalives(body: bytes) -> bytes:
    """``body`` with a ``: keep-alive`` comment after every event (in the body's own line ending)."""
    eol = b"\r\n" if b"\r\n" in body else b"\n"
    comment = b": keep-alive" + eol + eol
    out, start = bytearray(), 0
    for end in event_ends(body):
        out += body[start:end] + comment
        start = end
    return bytes(out + body[start:])


def cut_framing(ex: Any) -> tuple[str, str] | None:
    """How a body the server cut is framed when replayed (None: any other body, close-delimited): as the server framed
    it, chunked, or with its Content-Length (or one byte more than the body), so that the client's read fails at the
    same byte as it did live, not a clean end of a close-delimited body."""
    from conformance.checks.transport import CUT_BY_SERVER

    if ex.observations.aborted not in CUT_BY_SERVER:
        return None
    if "chunked" in (ex.header("transfer-encoding") or "").lower():
        return "Transfer-Encoding", "chunked"
    declared = ex.header("content-length") or ""
    size = len(whole(ex.body))
    return "Content-Length", declared if declared.isdigit() and int(declared) > size else str(size + 1)


def write_requests(folder: str, fixtures: list[Fixture]) -> str:
    """Each fixture's recorded request, as a JSON file in ``folder`` (CONFORMANCE_REPLAY_REQUESTS: an adapter sends
    the scenario's own tools, tool choice and options); its path."""
    import os

    from conformance.wire.untrusted import json_text

    path = os.path.join(folder, "requests.json")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(json_text([fx.exchange.request for fx in fixtures]))
    return path


def _streams(raw: bytes, fixture: Fixture | None) -> bool:
    """Whether a request body asks for a stream (by the protocol's default where it does not say; a body that is not
    a JSON object, as if it did)."""
    try:
        value = json.loads(raw)
    except ValueError:
        return True
    protocol = fixture.exchange.protocol if fixture is not None else None
    default = bool(getattr(protocol, "streams_by_default", False))
    return not isinstance(value, dict) or value.get("stream", default) is True


def served_path(fixture: Fixture) -> str:
    """The route a fixture answers on: the path it was recorded on, under /v1 for the OpenAI routes."""
    path = fixture.exchange.path.split("?", 1)[0].rstrip("/")
    return path if path.startswith(("/v1/", "/api/")) else "/v1" + path


class ReplayServer(LocalServer):
    """Serves fixtures on 127.0.0.1; ``fixture`` can be changed between requests."""

    def __init__(self, fixtures: list[Fixture], chunking: str = "adversarial", seed: int = 0, port: int = 0,
                 keepalive: bool = False, stall: float = 0.0) -> None:
        if chunking not in CHUNKINGS:
            raise ValueError(f"unknown chunking {chunking!r}; choose from {', '.join(CHUNKINGS)}")
        self.fixtures, self.chunking, self.seed, self.keepalive = fixtures, chunking, seed, keepalive
        self.stall = stall  # seconds of silence after every event
        self.cuts: list[int] | None = None  # explicit cut points into the served body, instead of the chunking
        self.cuts_of: Any = None  # or a function of the fixture that gives them (a run's recorded reads)
        self.fixture: Fixture | None = None  # set it to serve one fixture; None serves them in turn
        self.served = 0
        self.wrong_paths: list[str] = []  # requests for paths the server does not serve (e.g. /v1/v1/...)
        self.wrong_at: list[tuple[int, str]] = []  # ... with the number of the fixture served in turn then
        # at most this many POSTs answered from the recording (an agent's run of one exchange); later ones get a 503,
        # counted in ``beyond``: the recording has no answer for them
        self.limit: int | None = None
        self.beyond = 0
        # the server's own unstreamed answer to a streamed fixture's request, where the run recorded one (by the
        # streamed fixture's id): an agent that asks again without streaming (Claude Code's fallback) gets it whole,
        # as the server answered that request; ``fallbacks`` counts them
        self.unstreamed: dict[int, Fixture] = {}
        self.fallbacks = 0
        self.last: Fixture | None = None  # the fixture served last
        super().__init__(self._handler(), port)

    @property
    def base_url(self) -> str:
        """The OpenAI routes' base (``host_url``, the root, is what Ollama clients take as OLLAMA_HOST)."""
        return self.host_url + "/v1"

    def served_body(self, fixture: Fixture) -> bytes:
        """The bytes served for ``fixture``: its body, with keep-alive comments when asked."""
        body = whole(fixture.exchange.body)
        return with_keepalives(body) if self.keepalive and fixture.body_path.suffix == ".sse" else body

    def next_path(self) -> str:
        return served_path(self.next_fixture())

    def next_fixture(self) -> Fixture:
        """The fixture for this request: the one set, or the next in turn."""
        return self.fixture if self.fixture is not None else self.fixtures[self.served % len(self.fixtures)]

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _wrong_path(self, served: tuple[str, ...]) -> bool:
                """404 for a path no OpenAI server serves; the client asked for it (seed 003 §1)."""
                path = self.path.split("?", 1)[0].rstrip("/")
                if path in served:
                    return False
                server.wrong_paths.append(f"{self.command} {path}")
                server.wrong_at.append((server.served, f"{self.command} {path}"))
                length = int(self.headers.get("Content-Length") or 0)
                self.rfile.read(length)
                body = b'{"error": {"message": "not found", "type": "invalid_request_error", "code": "not_found"}}'
                self.send_response(404)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                return True

            def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
                if self._wrong_path(("/v1/models",)):
                    return
                model = "replay"
                body = json.dumps({"object": "list", "data": [{"id": model, "object": "model", "created": 0,
                                                               "owned_by": "chat-conformance"}]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_POST(self) -> None:  # noqa: N802
                if server.limit is not None and server.served >= server.limit:
                    raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                    twin = server.unstreamed.get(id(server.last)) if server.last is not None else None
                    if twin is not None and not _streams(raw, server.last):
                        server.fallbacks += 1
                        self._answer(twin, [whole(twin.exchange.body)], chunked=False, stall=False, cuts=None)
                        return
                    server.beyond += 1
                    body = (b'{"type": "error", "error": {"type": "api_error", "message": "replay: the recording '
                            b'has no answer for this request"}}')
                    self.send_response(503)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                    return
                fixture = server.next_fixture()
                if self._wrong_path((served_path(fixture),)):
                    return
                length = int(self.headers.get("Content-Length") or 0)
                self.rfile.read(length)
                server.served += 1
                server.last = fixture
                framing = cut_framing(fixture.exchange)
                body = server.served_body(fixture)
                cuts = server.cuts_of(fixture) if server.cuts_of is not None else server.cuts
                parts = pieces(body, cuts) if cuts is not None else cut(body, server.chunking, server.seed + server.served)
                self._answer(fixture, parts, framing, server.chunking == "adversarial", cuts)

            def _answer(self, fixture: Fixture, parts: list[bytes], framing: tuple[str, str] | None = None,
                        stall: bool = False, cuts: list[int] | None = None, chunked: bool | None = None) -> None:
                """The fixture's status and headers, then its body in ``parts`` (as the server cut it: ``framing``)."""
                ex = fixture.exchange
                self.send_response(ex.status or 200)
                for name, value in ex.headers:
                    if name.lower() not in ("content-length", "transfer-encoding", "connection"):
                        self.send_header(name, value)
                self.send_header("Connection", "close")
                if framing is not None:
                    self.send_header(*framing)
                elif chunked is False:
                    self.send_header("Content-Length", str(sum(len(p) for p in parts)))
                self.end_headers()
                chunked = framing is not None and framing[0] == "Transfer-Encoding"
                body = b"".join(parts) if server.stall > 0 else b""
                ends = set(event_ends(body)) if server.stall > 0 else set()
                if ends:  # every event ends a piece, and the silence follows it
                    at = [0]
                    for piece in parts:
                        at.append(at[-1] + len(piece))
                    parts = pieces(body, sorted((set(at[1:-1]) | ends) - {0, len(body)}))
                written = 0
                try:
                    for index, piece in enumerate(parts):
                        # a body the server cut: its chunks, never the last (empty) one, as the server left it
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece) if chunked and piece else piece)
                        self.wfile.flush()
                        written += len(piece)
                        if written in ends and written < len(body):
                            time.sleep(server.stall)
                        if cuts is not None and index < len(parts) - 1:
                            time.sleep(0.001)  # each piece its own read, so a shrunk cut list replays the same
                        elif stall and index % 7 == 3:
                            time.sleep(0.002)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client stopped reading (at [DONE], or on an error): its right
                self.close_connection = True

        return Handler
