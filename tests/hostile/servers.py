"""Hostile servers on 127.0.0.1 for the suite's own tests and benchmarks/hostile.py.

Each is a raw-socket HTTP/1.1 server whose behaviour is one function of the parsed request; a
small honest chat server (``answer``) fills in whatever a behaviour leaves alone, so a run gets
past discovery and meets the hostile part where it matters. Every server stops by itself when
closed, and each connection thread ends within its own bound.

    python -m tests.hostile.servers NAME   # serve one on a free port (prints its base URL)
"""

from __future__ import annotations

import functools
import gzip
import json
import socket
import sys
import threading
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field

MAX_HEAD = 64 * 1024
MAX_BODY = 32 * 1024 * 1024
RUN_FOR = 120.0  # no connection of a hostile server lives longer than this


@dataclass
class Req:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    @property
    def key(self) -> str:
        return self.headers.get("authorization", "")

    def json(self) -> dict[str, object] | None:
        try:
            value = json.loads(self.body)
        except ValueError:
            return None
        return value if isinstance(value, dict) else None


Behaviour = Callable[[socket.socket, Req], None]


def _read_request(conn: socket.socket) -> Req | None:
    conn.settimeout(10)
    data = b""
    while b"\r\n\r\n" not in data:
        piece = conn.recv(65536)
        if not piece or len(data) > MAX_HEAD:
            return None
        data += piece
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    method, path, _ = (lines[0].split(" ") + ["", "", ""])[:3]
    headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    length = min(int(headers.get("content-length", "0") or 0), MAX_BODY)
    while len(body) < length:
        piece = conn.recv(min(1 << 20, length - len(body)))
        if not piece:
            break
        body += piece
    return Req(method, path.split("?")[0], headers, body)


def send(conn: socket.socket, status: int, headers: dict[str, str], body: bytes) -> None:
    reason = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 404: "Not Found"}.get(status, "X")
    head = f"HTTP/1.1 {status} {reason}\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    conn.sendall(head.encode("latin-1") + f"Content-Length: {len(body)}\r\n\r\n".encode() + body)


def sse_head(extra: str = "") -> bytes:
    return (b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
            b"X-Accel-Buffering: no\r\nConnection: close\r\n" + extra.encode("latin-1") + b"\r\n")


def chunk(delta: dict[str, object], finish: str | None = None) -> bytes:
    doc = {"id": "chatcmpl-h", "object": "chat.completion.chunk", "created": 1, "model": "m",
           "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    return b"data: " + json.dumps(doc).encode() + b"\n\n"


def answer(conn: socket.socket, req: Req, text: str = "Hello") -> None:
    """An honest, minimal answer: the model list, a short stream, a short JSON completion, 4xx for bad input."""
    if req.path.endswith("/v1/models"):
        send(conn, 200, {"Content-Type": "application/json"}, json.dumps(
            {"object": "list", "data": [{"id": "m", "object": "model", "created": 0, "owned_by": "h"}]}).encode())
        return
    body = req.json()
    if not req.path.endswith("/chat/completions") or body is None or not isinstance(body.get("messages"), list):
        send(conn, 400 if req.path.endswith("/chat/completions") else 404, {"Content-Type": "application/json"},
             b'{"error":{"message":"bad request","type":"invalid_request_error","code":"invalid_value"}}')
        return
    if body.get("stream") is True:
        conn.sendall(sse_head() + chunk({"role": "assistant", "content": text}) + chunk({}, "stop")
                     + b"data: [DONE]\n\n")
        return
    send(conn, 200, {"Content-Type": "application/json"}, json.dumps({
        "id": "chatcmpl-h", "object": "chat.completion", "created": 1, "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}).encode())


def _forever(conn: socket.socket, piece: bytes, pause: float = 0.0) -> None:
    end = time.monotonic() + RUN_FOR
    while time.monotonic() < end:
        conn.sendall(piece)
        if pause:
            time.sleep(pause)


def endless(conn: socket.socket, req: Req) -> None:
    """An endless event stream on every path, /health and /v1/models included."""
    conn.sendall(sse_head())
    _forever(conn, chunk({"content": "la"}))


def giant_line(conn: socket.socket, req: Req) -> None:
    """One data line that never ends, on every path."""
    conn.sendall(sse_head() + b"data: ")
    _forever(conn, b"x" * 65536)


def slowloris(conn: socket.socket, req: Req) -> None:
    """The chat answer's status line and headers, one byte every half second."""
    if not req.path.endswith("/chat/completions"):
        return answer(conn, req)
    for byte in sse_head():
        conn.sendall(bytes([byte]))
        time.sleep(0.5)


def dribbling_health(conn: socket.socket, req: Req) -> None:
    """An honest server whose /health sends one byte a second for ever."""
    if req.path != "/health":
        return answer(conn, req)
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n")
    _forever(conn, b" ", pause=1.0)


def reset(conn: socket.socket, req: Req) -> None:
    """Chat requests get a TCP reset and nothing else."""
    if not req.path.endswith("/chat/completions"):
        return answer(conn, req)
    conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")


def silent(conn: socket.socket, req: Req) -> None:
    """Chat requests are read and never answered."""
    if not req.path.endswith("/chat/completions"):
        return answer(conn, req)
    time.sleep(RUN_FOR)


@functools.cache
def bomb(levels: int) -> bytes:
    """256 MiB of zeros, gzip-compressed ``levels`` times (made once; about a second)."""
    raw = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    block = bytes(1 << 20)
    data = b"".join(raw.compress(block) for _ in range(256)) + raw.flush()  # 256 MiB of zeros
    for _ in range(levels - 1):
        data = gzip.compress(data, 9)
    return data


def gzip_bomb(levels: int) -> Behaviour:
    def behaviour(conn: socket.socket, req: Req) -> None:
        if not req.path.endswith("/chat/completions"):
            return answer(conn, req)
        data = bomb(levels)
        encoding = ", ".join(["gzip"] * levels)
        conn.sendall(sse_head(f"Content-Encoding: {encoding}\r\nContent-Length: {len(data)}\r\n") + data)
    behaviour.__doc__ = f"Chat answers of 256 MiB of zeros gzip-encoded {levels} time(s)."
    return behaviour


def huge_headers(conn: socket.socket, req: Req) -> None:
    """Chat answers with a megabyte of response headers."""
    if not req.path.endswith("/chat/completions"):
        return answer(conn, req)
    conn.sendall(b"HTTP/1.1 200 OK\r\n" + b"".join(b"X-Pad-%d: %s\r\n" % (i, b"p" * 1000) for i in range(1024)) + b"\r\n")


def drop_on_bad_input(conn: socket.socket, req: Req) -> None:
    """Honest, but bad input (not JSON, not application/json) gets the connection closed, no response."""
    is_json = req.headers.get("content-type", "").startswith("application/json")
    if req.path.endswith("/chat/completions") and (req.json() is None or not is_json):
        return
    answer(conn, req)


def echo_key(conn: socket.socket, req: Req) -> None:
    """Every response carries the Authorization header it got: in a 401 body, and in the answer's text."""
    if not req.key:
        send(conn, 401, {"Content-Type": "application/json"},
             json.dumps({"error": {"message": "no key", "type": "auth", "code": "invalid_api_key"}}).encode())
        return
    if req.path.endswith("/v1/models"):
        send(conn, 200, {"Content-Type": "application/json", "X-Echo": req.key}, json.dumps(
            {"object": "list", "data": [{"id": "m", "object": "model", "created": 0, "owned_by": req.key}]}).encode())
        return
    answer(conn, req, text=f"You sent {req.key}")


def works_on_bad_input(conn: socket.socket, req: Req) -> None:
    """Honest for valid requests; bad input gets 200 and keep-alive comments for ever (mlx_lm.server prefilling
    a prompt it should have refused)."""
    body = req.json()
    if req.path.endswith("/chat/completions") and (body is None or not isinstance(body.get("messages"), list)
                                                    or isinstance(body.get("temperature"), str)):
        conn.sendall(sse_head())
        _forever(conn, b": keepalive\n\n", pause=0.2)
        return
    answer(conn, req)


SERVERS: dict[str, Behaviour] = {
    "endless": endless, "giant-line": giant_line, "slowloris": slowloris, "dribbling-health": dribbling_health,
    "reset": reset, "silent": silent, "gzip-bomb": gzip_bomb(1), "double-gzip-bomb": gzip_bomb(2),
    "huge-headers": huge_headers, "drop-on-bad-input": drop_on_bad_input, "echo-key": echo_key,
    "works-on-bad-input": works_on_bad_input,
}


@dataclass
class HostileServer:
    """One hostile server on a free port of 127.0.0.1, a thread per connection."""

    behaviour: Behaviour
    listener: socket.socket = field(init=False)
    stopping: threading.Event = field(default_factory=threading.Event)

    def __post_init__(self) -> None:
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(64)
        self.listener.settimeout(0.2)
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.listener.getsockname()[1]}"

    def _accept(self) -> None:
        while not self.stopping.is_set():
            try:
                conn, _ = self.listener.accept()
            except (TimeoutError, OSError):
                continue
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        try:
            req = _read_request(conn)
            if req is not None and not self.stopping.is_set():
                self.behaviour(conn, req)
        except OSError:
            pass
        finally:
            conn.close()

    def close(self) -> None:
        self.stopping.set()
        self.listener.close()

    def __enter__(self) -> HostileServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


if __name__ == "__main__":  # pragma: no cover - for trying one by hand
    with HostileServer(SERVERS[sys.argv[1]]) as server:
        print(server.base_url, flush=True)
        time.sleep(RUN_FOR)
