"""The only I/O of the suite: send one request on a fresh connection, record the exchange exactly.

Every request runs under the same ``Limits`` (derived from ``--timeout``): connect, first byte,
between reads, and a total deadline that holds across every phase (a server that trickles its
status line one byte at a time still ends at the deadline), plus a cap on the raw wire bytes and
on the decoded body. ``Content-Encoding`` is undone here, incrementally, with the output bounded:
a decompression bomb is a finding, never an allocation. An endless, stalled, giant or hostile
response ends as an ``Exchange`` whose ``observations.aborted`` says why, never as a hang or an
exception.

Each request has a connection of its own (HTTP/1.1 through h11, or HTTP/1.0 written by hand), so a
connection the server reset after one answer never turns into a verdict about the next request.
"""

from __future__ import annotations

import re
import socket
import ssl
import threading
import time
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import urlsplit

import h11

from conformance.exchange import Exchange
from conformance.model.limits import (  # (re-exported: the limits every caller of the client reads)
    ABANDONED as ABANDONED,
)
from conformance.model.limits import ANSWER_DEADLINE as ANSWER_DEADLINE
from conformance.model.limits import DEFAULT_MAX_BYTES as DEFAULT_MAX_BYTES
from conformance.model.limits import MAX_HEADER_BYTES as MAX_HEADER_BYTES
from conformance.model.limits import REFUSAL_DEADLINE as REFUSAL_DEADLINE
from conformance.model.limits import SIZE_ABORTS as SIZE_ABORTS
from conformance.model.limits import Limits as Limits
from conformance.model.observations import Observations
from conformance.model.request import Request as Request  # (re-exported: what the client sends)
from conformance.protocols import answers_for, headers_for
from conformance.secrets import Scrubber
from conformance.wire.body import HOLD_BYTES, Spool
from conformance.wire.errors import WireError
from conformance.wire.sse import DEFAULT_MAX_LINE, SSEDecoder
from conformance.wire.untrusted import path_segment

READ_SIZE = 65536
SEND_SIZE = 65536



def request_headers(req: Request, api_key: str | None = None) -> dict[str, str]:
    """The headers sent: the request's own, a JSON Content-Type for a body, and what the route's protocol puts on
    every request (the key where it takes it: a bearer token unless the protocol says otherwise; a version header).
    A header the request sets itself is kept as it is (a scenario that sends a wrong key or version)."""
    headers = dict(req.headers)
    has_body = req.content is not None or req.body is not None
    if has_body and not any(k.lower() == "content-type" for k in headers):
        headers["Content-Type"] = "application/json"
    own = {k.lower() for k in headers}
    for name, value in headers_for(req.path, api_key).items():
        if name.lower() not in own:
            headers[name] = value
    return headers


def cancel_path(stream_id: str) -> str:
    """The AFM cancel endpoint of a stream (seed 000), the id one percent-encoded path segment; ``ValueError`` for
    an id that cannot be one (``untrusted.path_segment``)."""
    segment = path_segment(stream_id)
    if segment is None:
        raise ValueError(f"{stream_id!r} cannot be one path segment")
    return f"/v1/chat/completions/{segment}/cancel"


TARGET = re.compile(r"/[!-~]*")  # what goes on the request line: printable ASCII, no space, as a path


def join_url(base_url: str, path: str) -> str:
    """``base_url`` is normalized to end without /v1; ``path`` starts with / and names /v1 itself."""
    return base_url.rstrip("/") + path


class _Abort(Exception):
    """Stop reading: the reason goes into ``observations.aborted``."""

    def __init__(self, reason: str, error: str | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.error = error


INFLATE_PIECE = 64 * 1024  # the most one decompression call may produce: a bomb inflates a read at a time, never whole


class Decoder:
    """Undoes a ``Content-Encoding`` list (``gzip``, ``deflate``, ``identity``, in any stack) piece by piece: each call
    of ``feed`` gives the decoded bytes as pieces of at most ``INFLATE_PIECE`` (a read of a decompression bomb is
    inflated a piece at a time, each handed on before the next is made), and never more in all than the cap allows.
    A gzip body of several members (RFC 1952 2.2: "a series of members") is decoded member after member, the cap
    counting them all. An encoding it does not know is kept as is."""

    def __init__(self, content_encoding: str | None, cap: int) -> None:
        names = [n.strip().lower() for n in (content_encoding or "").split(",") if n.strip()]
        self.unknown = [n for n in names if n not in ("gzip", "x-gzip", "deflate", "identity")]
        self.gzip = [] if self.unknown else [n in ("gzip", "x-gzip") for n in reversed(names) if n != "identity"]
        self.stages = [zlib.decompressobj(_wbits(g)) for g in self.gzip]
        self.cap = cap
        self.produced = 0

    def feed(self, data: bytes) -> Iterator[bytes]:
        """The decoded pieces of ``data`` (none while a stage waits for more input)."""
        if not self.stages:  # identity, or an encoding kept as it is: the raw byte cap bounds it
            if data:
                yield data
            return
        for piece in self._through(0, data):
            self.produced += len(piece)
            if self.produced > self.cap:
                raise _Abort("decompression cap", f"the body inflates beyond {self.cap} bytes")
            yield piece

    def _through(self, at: int, data: bytes) -> Iterator[bytes]:
        if at == len(self.stages):
            if data:
                yield data
            return
        while data:
            stage = self.stages[at]
            try:
                out = stage.decompress(data, INFLATE_PIECE)
            except zlib.error as exc:
                raise _Abort("decode error", f"content-encoding: {exc}") from None
            data = stage.unconsumed_tail
            if stage.eof and stage.unused_data:
                data = stage.unused_data
                if not self.gzip[at]:  # bytes after the end of a deflate stream: not part of the body
                    data = b""
                else:  # the next gzip member
                    self.stages[at] = zlib.decompressobj(_wbits(True))
            yield from self._through(at + 1, out)
            if not out and not data:
                break


def _wbits(gzip: bool) -> int:
    return 16 + zlib.MAX_WBITS if gzip else zlib.MAX_WBITS


@dataclass
class _Reading:
    """What a response read has gathered so far (kept on an abort too)."""

    status: int | None = None
    version: str = "HTTP/1.1"
    headers: tuple[tuple[str, str], ...] = ()
    body: Spool = field(default_factory=Spool)
    arrivals: list[tuple[float, int]] = field(default_factory=list)
    raw: int = 0
    obs: dict[str, Any] = field(default_factory=dict)


class _Clock:
    def __init__(self, limits: Limits) -> None:
        self.start = time.monotonic()
        self.limits = limits
        self.answered = limits.answer is None  # set once the answer has begun (see Limits.answer)
        self.abandon: threading.Event | None = None

    def elapsed(self) -> float:
        return time.monotonic() - self.start

    def budget(self, phase: float, phase_name: str) -> tuple[float, str]:
        """The wait allowed now: the phase's own limit or what is left of the total, whichever is less."""
        left, name = self.limits.total - self.elapsed(), self.limits.total_name
        if not self.answered and self.limits.answer is not None and self.limits.answer <= self.limits.total:
            left, name = self.limits.answer - self.elapsed(), self.limits.answer_name
        if left <= 0:
            raise _Abort(name)
        return (phase, phase_name) if phase <= left else (left, name)


def tls_context(limits: Limits) -> ssl.SSLContext:
    """The TLS context of a request: the system's CAs, or --ca-bundle's; none checked with --insecure."""
    context = ssl.create_default_context(cafile=limits.ca_bundle)
    if not limits.verify_tls:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    return context


def proxy_for(base_url: str, limits: Limits) -> str | None:
    """The proxy URL the environment names for this target (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY, NO_PROXY, in
    either case, as curl and urllib read them), or None for a direct connection."""
    from urllib.request import getproxies_environment, proxy_bypass_environment  # type: ignore[attr-defined]

    if not limits.use_proxy:
        return None
    parts = urlsplit(base_url)
    proxies = getproxies_environment()
    proxy = proxies.get(parts.scheme) or proxies.get("all")
    if not proxy or proxy_bypass_environment(parts.hostname or "", proxies):
        return None
    return proxy if "://" in proxy else f"http://{proxy}"


def _connect(base_url: str, limits: Limits, clock: _Clock) -> tuple[socket.socket, str, str]:
    """A connected socket, the Host authority, and the prefix of the request target: empty, or the origin when
    the request goes through an HTTP proxy in absolute form (an https target is tunnelled with CONNECT)."""
    parts = urlsplit(base_url)
    host = parts.hostname or "127.0.0.1"
    port = parts.port or (443 if parts.scheme == "https" else 80)
    authority = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    proxy = proxy_for(base_url, limits)
    wait, _ = clock.budget(limits.connect, "connect timeout")
    origin = ""
    try:
        if proxy is None:
            sock = socket.create_connection((host, port), timeout=wait)
        else:
            via = urlsplit(proxy)
            sock = socket.create_connection((via.hostname or "127.0.0.1", via.port or 8080), timeout=wait)
            auth = _proxy_auth(via)
            if parts.scheme == "https":
                _tunnel(sock, authority, auth, limits, clock)
            else:
                origin = f"http://{authority}"
        if parts.scheme == "https":
            sock = tls_context(limits).wrap_socket(sock, server_hostname=host)
    except (OSError, ssl.SSLError) as exc:
        raise _Abort("connect error", str(exc)[:200]) from None
    return sock, authority, origin


def _proxy_auth(via: Any) -> str | None:
    if via.username is None:
        return None
    import base64
    from urllib.parse import unquote

    pair = f"{unquote(via.username)}:{unquote(via.password or '')}".encode()
    return "Basic " + base64.b64encode(pair).decode("ascii")


def _tunnel(sock: socket.socket, authority: str, auth: str | None, limits: Limits, clock: _Clock) -> None:
    """CONNECT through the proxy; the tunnel is open once it answers 2xx (its head read within the limits)."""
    head = f"CONNECT {authority} HTTP/1.1\r\nHost: {authority}\r\n"
    if auth:
        head += f"Proxy-Authorization: {auth}\r\n"
    sock.sendall((head + "\r\n").encode("ascii"))
    got = b""
    while b"\r\n\r\n" not in got:
        wait, name = clock.budget(limits.first_byte, "first-byte timeout")
        sock.settimeout(wait)
        try:
            piece = sock.recv(4096)
        except TimeoutError:
            raise _Abort(name) from None
        if not piece or len(got) > limits.max_header_bytes:
            raise _Abort("connect error", "the proxy closed the tunnel before it opened")
        got += piece
    line = got.split(b"\r\n", 1)[0]
    status = line.split()
    if len(status) < 2 or not status[1].startswith(b"2"):
        raise _Abort("connect error", f"the proxy refused the tunnel: {line[:120]!r}")


def _send_all(sock: socket.socket, data: bytes, limits: Limits, clock: _Clock) -> bool:
    """Send within the limits; False when the server stopped reading (it may have answered already)."""
    for at in range(0, len(data), SEND_SIZE):
        wait, name = clock.budget(limits.idle, "idle timeout")
        sock.settimeout(wait)
        try:
            sock.sendall(data[at:at + SEND_SIZE])
        except TimeoutError:
            raise _Abort(name if name in ("total timeout", "run timeout", REFUSAL_DEADLINE, ANSWER_DEADLINE)
                         else "send timeout") from None
        except OSError:
            return False
    return True


ABANDON_POLL = 0.1


def _recv(sock: socket.socket, got: _Reading, limits: Limits, clock: _Clock) -> bytes:
    first = got.raw == 0
    wait, name = clock.budget(limits.first_byte if first else limits.idle,
                              "first-byte timeout" if first else "idle timeout")
    end = time.monotonic() + wait
    while True:
        if clock.abandon is not None and clock.abandon.is_set():
            raise _Abort(ABANDONED)
        slice_s = end - time.monotonic() if clock.abandon is None else min(end - time.monotonic(), ABANDON_POLL)
        sock.settimeout(max(slice_s, 0.001))
        try:
            data = sock.recv(READ_SIZE)
            break
        except TimeoutError:
            if time.monotonic() >= end:
                raise _Abort(name) from None
        except OSError as exc:
            raise _Abort("transport error", f"{type(exc).__name__}: {exc}"[:200]) from None
    got.raw += len(data)
    if got.raw > limits.max_bytes + limits.max_header_bytes:
        raise _Abort("byte cap")
    return data


class _Watch:
    """The SSE events a scenario waits for (the first one, or N before it leaves the stream)."""

    def __init__(self, req: Request, clock: _Clock) -> None:
        self.req = req
        self.clock = clock
        wanted = req.stop_after_events is not None or req.first_event is not None or not clock.answered
        self.decoder = SSEDecoder() if wanted else None
        self.partial: int | None = None  # once the decoder is let go: the bytes of the line not ended yet
        self.seen = 0
        # under a refusal or answer deadline, the event that shows the generation under way or over (the protocol's
        # `answers`): a role-only chunk sent before the prefill is no answer, so a server that sends one and then
        # prefills a prompt beyond its context is cut at the deadline, not waited for (issue 44)
        self.answers = answers_for(req.path) if not clock.answered else None

    def feed(self, piece: bytes, limits: Limits) -> bool:
        """True when the scenario has seen what it came for and leaves the stream."""
        if self.decoder is None:
            if self.partial is not None:
                self.partial = _unended(piece, self.partial)
                if self.partial > DEFAULT_MAX_LINE:
                    raise _Abort("line cap")
            return False
        try:
            events = self.decoder.feed(piece)
        except WireError:  # a giant line: the checks report it from the body
            raise _Abort("line cap") from None
        req = self.req
        if events:
            if self.answers is not None and not self.clock.answered and any(self.answers(e.data) for e in events):
                self.clock.answered = True
            if req.first_event is not None:
                req.first_event.set()
            if req.stop_after_events is None and req.first_event is None and self.clock.answered:
                # answered, and nothing else is waited for: the rest is not decoded twice (the judge decodes it),
                # only its lines' lengths followed for the line cap (a line ended in this piece: an event came)
                self.decoder = None
                self.partial = _unended(piece, 0)
        self.seen += sum(1 for e in events if req.counts(e.data)) if req.counts is not None else len(events)
        if req.stop_after_events is not None and self.seen >= req.stop_after_events:
            if req.arrived is not None and req.hold is not None:
                req.arrived.release()
                req.hold.wait(limits.idle)
            return True
        return False


def _unended(piece: bytes, before: int) -> int:
    """The bytes of the line not ended yet after ``piece``, ``before`` of it having come earlier (CR, LF or both end
    a line)."""
    cut = max(piece.rfind(b"\n"), piece.rfind(b"\r"))
    return len(piece) - cut - 1 if cut >= 0 else before + len(piece)


def _body_piece(got: _Reading, decoder: Decoder, watch: _Watch, piece: bytes, clock: _Clock, limits: Limits) -> bool:
    """One read of the body: decoded a bounded piece at a time, each spooled and watched before the next is made."""
    try:
        for data in decoder.feed(piece):
            got.body.write(data)
            if len(got.body) > limits.max_bytes:
                raise _Abort("byte cap")
            if watch.feed(data, limits):
                got.obs["disconnected_after_events"] = watch.seen
                return True
    finally:
        got.arrivals.append((round(clock.elapsed(), 4), len(got.body)))
    return False


SEND_JOINED = 1024 * 1024  # a request body up to this size goes out in one write with its head


def _exchange_http11(sock: socket.socket, authority: str, target: str, req: Request, headers: dict[str, str],
                     limits: Limits, clock: _Clock, got: _Reading) -> None:
    conn = h11.Connection(h11.CLIENT, max_incomplete_event_size=limits.max_header_bytes)
    content = req.encoded()
    head = [("Host", authority), *headers.items()]
    if content is not None and not any(k.lower() == "content-length" for k in headers):
        head.append(("Content-Length", str(len(content))))
    out = conn.send(h11.Request(method=req.method, target=target, headers=head)) or b""
    if content and len(content) > SEND_JOINED:  # a large body is sent as it is, never copied beside its head
        _send_all(sock, out, limits, clock)
        for piece in conn.send_with_data_passthrough(h11.Data(data=content)) or []:
            _send_all(sock, piece, limits, clock)
        out = b""
    elif content:  # a small one in the same write as its head (two small writes would meet Nagle's delay)
        out += conn.send(h11.Data(data=content)) or b""
    out += conn.send(h11.EndOfMessage()) or b""
    if out:
        _send_all(sock, out, limits, clock)
    watch = _Watch(req, clock)
    decoder: Decoder | None = None
    while True:
        try:
            event = conn.next_event()
        except h11.RemoteProtocolError as exc:
            if "buffer too long" in str(exc):  # h11's max_incomplete_event_size: the head outgrew the cap
                raise _Abort("header cap", f"a response head over {limits.max_header_bytes} bytes") from None
            raise _Abort("protocol error", str(exc)[:200]) from None
        if event is h11.NEED_DATA:
            conn.receive_data(_recv(sock, got, limits, clock))
            continue
        if isinstance(event, h11.InformationalResponse):
            continue
        if isinstance(event, h11.Response):
            got.status = event.status_code
            got.version = f"HTTP/{event.http_version.decode()}"
            got.headers = tuple((k.decode("latin-1").lower(), v.decode("latin-1")) for k, v in event.headers)
            decoder = Decoder(_header(got.headers, "content-encoding"), limits.max_bytes)
            if not 200 <= event.status_code < 300 or "event-stream" not in (_header(got.headers, "content-type") or ""):
                clock.answered = True  # a refusal, or a body that is not a stream: its status is the answer
            if decoder.unknown:
                got.obs["error"] = f"content-encoding {', '.join(decoder.unknown)} kept undecoded"
        elif isinstance(event, h11.Data) and decoder is not None:
            if _body_piece(got, decoder, watch, bytes(event.data), clock, limits):
                return
        elif isinstance(event, (h11.EndOfMessage, h11.ConnectionClosed)):
            return  # record() releases a waiting first_event on every ending


def _header(headers: tuple[tuple[str, str], ...], name: str) -> str | None:
    return next((v for k, v in headers if k == name), None)


def record(base_url: str, req: Request, limits: Limits | None = None, api_key: str | None = None,
           secrets: tuple[str, ...] = ()) -> Exchange:
    """Send ``req`` on a fresh connection and record the exchange; never raises for what the server does. The key
    (and any other ``secrets``, such as -H values) is masked in what is recorded, in every form ``Scrubber`` knows,
    before anything reads it: the one masking pass of every live exchange."""
    limits = limits or Limits()
    headers = request_headers(req, api_key)
    clock = _Clock(limits)
    clock.abandon = req.abandon
    got = _Reading()
    prefix = urlsplit(base_url).path.rstrip("/")
    sock: socket.socket | None = None
    try:
        if TARGET.fullmatch(prefix + req.path) is None:  # never sent: the suite builds every target it sends
            raise _Abort("request error", f"the request target {(prefix + req.path)[:80]!r} is not printable ASCII")
        sock, authority, origin = _connect(base_url, limits, clock)
        _exchange_http11(sock, authority, origin + prefix + req.path, req, headers, limits, clock, got)
    except _Abort as stop:
        got.obs["aborted"] = stop.reason
        if stop.error:
            got.obs["error"] = stop.error
    finally:
        if req.first_event is not None:
            req.first_event.set()
        if sock is not None:
            sock.close()
    got.obs["elapsed_s"] = round(clock.elapsed(), 4)
    if req.content is not None and req.body is not None:  # the record names a bulk it sent (Request.content)
        got.obs["sent_bytes"] = len(req.content)
    return Scrubber((api_key, *secrets)).exchange(Exchange(
        request=req.body, body=got.body.close(), status=got.status, headers=got.headers, method=req.method,
        path=req.path, request_headers=tuple((k.lower(), v) for k, v in headers.items()), http_version=got.version,
        arrivals=tuple(got.arrivals), intent=req.intent, scenario=req.scenario,
        observations=Observations.from_json(got.obs),
    ))


def record_http10(base_url: str, req: Request, limits: Limits, api_key: str | None = None,
                  secrets: tuple[str, ...] = ()) -> Exchange:
    """One request over HTTP/1.0, read until the server closes, under the same limits and caps (the body held in
    memory, so at most ``HOLD_BYTES`` of it: the scenarios that speak HTTP/1.0 ask for short answers)."""
    limits = replace(limits, max_bytes=min(limits.max_bytes, HOLD_BYTES))
    clock = _Clock(limits)
    got = _Reading(version="HTTP/1.0")
    raw = bytearray()
    body = req.encoded() or b""
    prefix = urlsplit(base_url).path.rstrip("/")
    sock: socket.socket | None = None
    try:
        sock, authority, origin = _connect(base_url, limits, clock)
        head = [f"{req.method} {origin}{prefix}{req.path} HTTP/1.0", f"Host: {authority}",
                *(f"{k}: {v}" for k, v in request_headers(req, api_key).items()), f"Content-Length: {len(body)}"]
        _send_all(sock, ("\r\n".join(head) + "\r\n\r\n").encode() + body, limits, clock)
        while chunk := _recv(sock, got, limits, clock):
            raw += chunk
            got.arrivals.append((round(clock.elapsed(), 4), len(raw)))
    except _Abort as stop:
        got.obs["aborted"] = stop.reason
        if stop.error:
            got.obs["error"] = stop.error
    finally:
        if sock is not None:
            sock.close()
    return Scrubber((api_key, *secrets)).exchange(_parse_http10(bytes(raw), req, got, api_key))


def _parse_http10(raw: bytes, req: Request, got: _Reading, api_key: str | None) -> Exchange:
    from conformance.errors import InputError
    from conformance.wire.http1 import parse_header_block, split_curl_i

    try:
        header_text, body = split_curl_i(raw) if raw.startswith(b"HTTP/") else (None, raw)
    except InputError:
        header_text, body = None, raw
    status, version, headers = parse_header_block(header_text) if header_text else (None, "HTTP/1.0", [])
    offset = len(raw) - len(body)
    sent = tuple((k.lower(), v) for k, v in request_headers(req, api_key).items())
    return Exchange(request=req.body, body=body, status=status, headers=tuple(headers), method=req.method,
                    path=req.path, request_headers=sent, http_version=version, request_http_version="HTTP/1.0",
                    scenario=req.scenario, intent=req.intent,
                    arrivals=tuple((t, n - offset) for t, n in got.arrivals if n > offset),
                    observations=Observations.from_json(got.obs))
