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
import ssl
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
    target: str = ""  # the request target exactly as it came (path, query and all)

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
    return Req(method, path.split("?")[0], headers, body, path)


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
    # 512 events a write: the byte cap (64 MiB at --timeout 2) is reached well within the time limit even on a
    # loaded 2-core CI machine, so the finding is the cap's (TRN-011), not the clock's
    _forever(conn, chunk({"content": "la"}) * 512)


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


def sluggish(conn: socket.socket, req: Req) -> None:
    """An honest server that takes a second before each chat answer."""
    if req.path.endswith("/chat/completions"):
        time.sleep(1.0)
    answer(conn, req)


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


# -- untrusted text: invalid Unicode, terminal escapes, ids that would steer a request path -------------------

SURROGATE = "\ud800"  # a lone surrogate: json.dumps writes it as the escape \ud800, which json.loads gives back
# clear the screen, retitle the window, plant an OSC 8 link, then overwrite the line above with a forged verdict;
# C1 controls (CSI as one character, DCS, ST) and a right-to-left override
NASTY = ("\x1b[2J\x1b[H\x1b]0;pwned\x07\x1b]8;;https://example.invalid/\x1b\\link\x1b]8;;\x1b\\"
         "\r\x1b[1A\x1b[2KPASS  every rule passed\x9b31m\x90q\x9c\u202e")
STEERING_IDS = ("../../v1/models", "x?y=1", "x#frag", "x%2Fy", "a b", "a\x01b\x1b[2J", "..", "x/../../health")


def _dump(doc: object) -> bytes:
    return json.dumps(doc).encode()  # ASCII: lone surrogates and controls as \u escapes


def _tainted(text: str) -> Behaviour:
    """A server that puts ``text`` in every string it controls: model ids, chunk ids, content, reasoning, tool names
    and arguments, error messages, header values; chunk ids cycle through STEERING_IDS."""
    counter = iter(range(1 << 30))

    def behaviour(conn: socket.socket, req: Req) -> None:
        model = f"m{text}"
        # header values may carry obs-text (bytes 0x80-0xff), not C0 controls: h11 would refuse the whole response
        note = "".join(c for c in text if c >= " ").encode("utf-8", "surrogatepass").decode("latin-1")
        header = {"X-Note": note, "Content-Type": "application/json"}
        if req.path.endswith("/v1/models"):
            send(conn, 200, header, _dump({"object": "list", "data": [
                {"id": model, "object": "model", "created": 0, "owned_by": text}]}))
            return
        if req.path == "/health":
            send(conn, 200, header, _dump({"status": text}))
            return
        body = req.json()
        if req.path.startswith("/api/"):
            if req.path == "/api/tags":
                send(conn, 200, header, _dump({"models": [{"name": model, "model": model}]}))
                return
            key = "message" if req.path == "/api/chat" else "response"
            part = {"role": "assistant", "content": f"Hi {text}"} if key == "message" else f"Hi {text}"
            lines = [{"model": model, key: part, "done": False},
                     {"model": model, key: {"role": "assistant", "content": ""} if key == "message" else "",
                      "done": True, "done_reason": text}]
            send(conn, 200, {"Content-Type": "application/x-ndjson"}, b"".join(_dump(x) + b"\n" for x in lines))
            return
        if body is None or not isinstance(body.get("messages"), list):
            send(conn, 400, header, _dump({"error": {"message": f"bad {text} input", "type": text, "code": text,
                                                     "param": text}}))
            return
        ident = STEERING_IDS[next(counter) % len(STEERING_IDS)] + text
        tools = body.get("tools")
        delta: dict[str, object] = {"role": "assistant", "content": f"Hi {text}", "reasoning_content": text}
        if tools:
            delta = {"role": "assistant", "tool_calls": [{"index": 0, "id": f"call{text}", "type": "function",
                                                          "function": {"name": f"get{text}",
                                                                       "arguments": json.dumps({"a": text})}}]}
        finish = "tool_calls" if tools else "stop"
        if body.get("stream") is True:
            def doc(d: dict[str, object], f: str | None) -> bytes:
                return b"data: " + _dump({"id": ident, "object": "chat.completion.chunk", "created": 1,
                                          "model": model, "system_fingerprint": text,
                                          "choices": [{"index": 0, "delta": d, "finish_reason": f}]}) + b"\n\n"
            raw = b'data: {"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[' \
                  b'{"index":0,"delta":{"content":"\xff\xfe\xc3"},"finish_reason":null}]}\n\n'  # invalid UTF-8
            conn.sendall(sse_head(f"X-Note: \xff{note}\r\n") + doc(delta, None) + raw + doc({}, finish)
                         + b"data: " + _dump({"error": {"message": f"late {text}"}}) + b"\n\n" + b"data: [DONE]\n\n")
            return
        message = {k: v for k, v in delta.items() if k != "reasoning_content"}
        send(conn, 200, header, _dump({"id": ident, "object": "chat.completion", "created": 1, "model": model,
                                       "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                                       "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}))
    behaviour.__doc__ = f"Every server-controlled string holds {text!r}; chunk ids cycle through path-steering ids."
    return behaviour


def key_forms(conn: socket.socket, req: Req) -> None:
    """Echoes the API key in every form a reader could put back together: split across two events (content, tool
    arguments, reasoning), JSON-escaped in whole and in part, without its public prefix, in headers, in NDJSON
    frames, in error messages and in the model list."""
    key = req.key.removeprefix("Bearer ")
    if not key:
        send(conn, 401, {"Content-Type": "application/json"}, b'{"error":{"message":"no key"}}')
        return
    escaped = "".join(f"\\u{ord(c):04x}" for c in key)
    part = f"\\u{ord(key[0]):04X}{key[1:]}"  # upper-case hex, the rest literal
    bare = key.split("-")[-1]  # the distinctive part, without sk-proj-
    mid = len(key) // 2
    heads = {"X-Echo": bare, "X-Echo-Escaped": escaped, "Content-Type": "application/json"}
    if req.path.endswith("/v1/models"):
        text = ('{"object":"list","data":[{"id":"m","object":"model","created":0,"owned_by":"' + escaped + '"}]}')
        send(conn, 200, heads, text.encode())
        return
    if req.path.startswith("/api/"):
        lines = [{"model": "m", "message": {"role": "assistant", "content": key[:mid]}, "done": False},
                 {"model": "m", "message": {"role": "assistant", "content": key[mid:]}, "done": False},
                 {"model": "m", "message": {"role": "assistant", "content": ""}, "done": True, "done_reason": "stop"}]
        send(conn, 200, {"Content-Type": "application/x-ndjson", "X-Echo": bare},
             b"".join(_dump(x) + b"\n" for x in lines))
        return
    body = req.json()
    if body is None or not isinstance(body.get("messages"), list):
        send(conn, 400, heads, ('{"error":{"message":"bad key ' + part + '","type":"invalid_request_error",'
                                '"code":"invalid_value"}}').encode())
        return
    if body.get("stream") is not True:
        send(conn, 200, heads, ('{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,'
                                '"message":{"role":"assistant","content":"' + escaped + ' ' + bare + '"},'
                                '"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1,'
                                '"total_tokens":2}}').encode())
        return

    def event(delta: str) -> bytes:
        return (b'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,'
                b'"delta":' + delta.encode() + b',"finish_reason":null}]}\n\n')
    call = '{"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments":"'
    conn.sendall(sse_head(f"X-Echo: {bare}\r\n")
                 + event('{"role":"assistant","content":"' + key[:mid] + '"}') + event('{"content":"' + key[mid:] + '"}')
                 + event('{"content":" ' + escaped + ' "}') + event('{"content":"' + part + '"}')
                 + event('{"content":" ' + bare[:3] + '"}') + event('{"content":"' + bare[3:] + '"}')
                 + event('{"reasoning_content":"' + key[:4] + '"}') + event('{"reasoning_content":"' + key[4:] + '"}')
                 + event('{"tool_calls":[' + call + key[:6] + '"}}]}')
                 + event('{"tool_calls":[{"index":0,"function":{"arguments":"' + key[6:] + '"}}]}')
                 + b'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,'
                   b'"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n')


# -- floods and pathological JSON ------------------------------------------------------------------------------

TINY = (b'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,'
        b'"delta":{"content":"a"},"finish_reason":null}]}\n\n')


def million_chunks(conn: socket.socket, req: Req) -> None:
    """Every chat stream is a million one-token chunks, then its finish and [DONE] (a non-stream answer is honest)."""
    body = req.json()
    if not req.path.endswith("/chat/completions") or body is None or body.get("stream") is not True:
        return answer(conn, req)
    conn.sendall(sse_head())
    batch = TINY * 1000
    for _ in range(1000):
        conn.sendall(batch)
    conn.sendall(chunk({}, "stop") + b"data: [DONE]\n\n")


def long_stream(mib: float) -> Behaviour:
    """Every chat stream is ``mib`` MiB of one-token chunks, then its finish (length), usage and [DONE]: the shape of a
    long reasoning answer, longer than the 2 MiB a body is held in memory up to (a non-stream answer is honest)."""
    tokens = int(mib * 1024 * 1024) // len(TINY) // 1000 * 1000

    def behaviour(conn: socket.socket, req: Req) -> None:
        body = req.json()
        if not req.path.endswith("/chat/completions") or body is None or body.get("stream") is not True:
            return answer(conn, req)
        conn.sendall(sse_head() + TINY.replace(b'{"content"', b'{"role":"assistant","content"'))
        batch = TINY * 1000
        for _ in range(tokens // 1000):
            conn.sendall(batch)
        usage = {"prompt_tokens": 3, "completion_tokens": tokens + 1, "total_tokens": tokens + 4}
        head = b'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":'
        conn.sendall(head + b'[{"index":0,"delta":{},"finish_reason":"length"}]}\n\n' + head + b'[],"usage":'
                     + json.dumps(usage).encode() + b"}\n\ndata: [DONE]\n\n")

    behaviour.tokens = tokens + 1  # type: ignore[attr-defined]
    return behaviour


def comment_flood(conn: socket.socket, req: Req) -> None:
    """Every chat answer is an event stream of comment lines and nothing else, for ever."""
    if not req.path.endswith("/chat/completions"):
        return answer(conn, req)
    conn.sendall(sse_head())
    _forever(conn, b":\n" * 32768)


def informational_forever(conn: socket.socket, req: Req) -> None:
    """Every chat request gets 1xx responses, one after another, for ever, and never a final one."""
    if not req.path.endswith("/chat/completions"):
        return answer(conn, req)
    _forever(conn, b"HTTP/1.1 102 Processing\r\n\r\n" * 256)


def length_beyond_body(conn: socket.socket, req: Req) -> None:
    """Every chat answer announces a megabyte and sends twenty bytes, then closes."""
    if not req.path.endswith("/chat/completions"):
        return answer(conn, req)
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1048576\r\n\r\n"
                 b'{"id":"c","choices":[')


def _pathological(payload: bytes) -> Behaviour:
    def behaviour(conn: socket.socket, req: Req) -> None:
        body = req.json()
        if not req.path.endswith("/chat/completions") or body is None:
            return answer(conn, req)
        if body.get("stream") is True:
            conn.sendall(sse_head() + b"data: " + payload + b"\n\n" + chunk({"content": "x"}, "stop")
                         + b"data: [DONE]\n\n")
        else:
            send(conn, 200, {"Content-Type": "application/json"}, payload)
    return behaviour


DEEP = b"[" * 100_000 + b"]" * 100_000
DIGITS = (b'{"id":"c","object":"chat.completion.chunk","created":' + b"9" * 100_000 + b',"model":"m","choices":'
          b'[{"index":' + b"1" * 100_000 + b',"delta":{"content":"x"},"finish_reason":null}]}')
deep_nesting = _pathological(DEEP)
deep_nesting.__doc__ = "Every chat answer (stream or not) holds a JSON array nested 100,000 deep."
huge_integers = _pathological(DIGITS)
huge_integers.__doc__ = "Every chat answer (stream or not) holds integers of 100,000 digits."


def many_models(conn: socket.socket, req: Req) -> None:
    """/v1/models lists 200,000 models (about 14 MB); everything else is honest."""
    if not req.path.endswith("/v1/models"):
        return answer(conn, req)
    send(conn, 200, {"Content-Type": "application/json"}, b'{"object":"list","data":['
         + b",".join(b'{"id":"model-%06d","object":"model","created":0,"owned_by":"h"}' % i for i in range(200_000))
         + b"]}")


# -- issue 44: bombs that inflate to gigabytes, a server that dribbles every answer, one that floods every answer ---

GIB = 1 << 30


def _numbered(i: int) -> bytes:
    """A one-token chunk that differs from its neighbours (a flood of them takes the decoder's ordinary path)."""
    return TINY.replace(b'"content":"a"', b'"content":"t%d"' % i)


@functools.cache
def inflating(total: int, members: int = 1) -> bytes:
    """``total`` bytes of one-token chat chunks, gzip-encoded as ``members`` gzip members one after another (RFC 1952
    2.2: a gzip file is a series of members). Each member's deflate stream is one full-flush block repeated (a full
    flush resets the window, so the block's bytes are the same each time): gigabytes made in a second, about 1/250 of
    them on the wire."""
    block = TINY * 7085  # about 1 MiB
    per = max(1, total // members // len(block))
    deflate = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    unit = deflate.compress(block) + deflate.flush(zlib.Z_FULL_FLUSH)
    tail = deflate.flush()
    crc = 0
    for _ in range(per):
        crc = zlib.crc32(block, crc)
    member = (b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff" + unit * per + tail
              + crc.to_bytes(4, "little") + ((per * len(block)) & 0xFFFFFFFF).to_bytes(4, "little"))
    return member * members


def gzip_gigabytes(total: int, members: int) -> Behaviour:
    def behaviour(conn: socket.socket, req: Req) -> None:
        if not req.path.endswith("/chat/completions"):
            return answer(conn, req)
        data = inflating(total, members)
        conn.sendall(sse_head(f"Content-Encoding: gzip\r\nContent-Length: {len(data)}\r\n") + data)
    behaviour.__doc__ = (f"Chat answers of {total / GIB:g} GiB of chunks, gzip-encoded in {members} member(s) "
                         "(about 1/250 of that on the wire)")
    return behaviour


class _Capture:
    """A socket that keeps what is sent to it (an honest answer, made once, then sent another way)."""

    def __init__(self) -> None:
        self.data = b""

    def sendall(self, data: bytes) -> None:
        self.data += data


def _honest_bytes(req: Req) -> bytes:
    capture = _Capture()
    answer(capture, req)  # type: ignore[arg-type]
    return capture.data


def dribble(conn: socket.socket, req: Req) -> None:
    """Every answer, honest, on every path: the head at once, then the body one byte every 50 ms (a slowloris of the
    body; the slowloris above dribbles the head): each request has its status and runs to its time limit (a 500-byte
    stream takes 25 s)."""
    data = _honest_bytes(req)
    head, sep, body = data.partition(b"\r\n\r\n")
    conn.sendall(head + sep)
    for byte in body:
        conn.sendall(bytes([byte]))
        time.sleep(0.05)


def flood_everything(conn: socket.socket, req: Req) -> None:
    """Every answer on every path, the model list and errors included, is a 200 event stream of distinct chunks for
    ever, as fast as the socket takes them (each answer ends at the suite's byte cap)."""
    conn.sendall(sse_head())
    end = time.monotonic() + RUN_FOR
    i = 0
    while time.monotonic() < end:
        conn.sendall(b"".join(_numbered(i + j) for j in range(500)))
        i += 500


def short_lines(conn: socket.socket, req: Req) -> None:
    """Every chat stream is one event that never ends: a data line of one character after another, for ever (the
    event's data grows a line at a time, never a long line); every other answer is honest."""
    if not req.path.endswith("/chat/completions"):
        return answer(conn, req)
    conn.sendall(sse_head())
    _forever(conn, b"data: a\n" * 8192)


def short_ndjson_lines(conn: socket.socket, req: Req) -> None:
    """Ollama's routes answer with an empty JSON object per line, for ever; chat streams with empty events
    (a data line of nothing, a blank line) for ever."""
    if req.path.startswith("/api/"):
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/x-ndjson\r\nConnection: close\r\n\r\n")
        _forever(conn, b"{}\n" * 16384)
        return
    if not req.path.endswith("/chat/completions"):
        return answer(conn, req)
    conn.sendall(sse_head())
    _forever(conn, b"data:\n\n" * 8192)


SERVERS: dict[str, Behaviour] = {
    "endless": endless, "giant-line": giant_line, "slowloris": slowloris, "dribbling-health": dribbling_health,
    "reset": reset, "silent": silent, "sluggish": sluggish, "gzip-bomb": gzip_bomb(1), "double-gzip-bomb": gzip_bomb(2),
    "huge-headers": huge_headers, "drop-on-bad-input": drop_on_bad_input, "echo-key": echo_key,
    "works-on-bad-input": works_on_bad_input,
    "surrogates": _tainted(SURROGATE), "control-characters": _tainted(NASTY), "key-forms": key_forms,
    "million-chunks": million_chunks, "comment-flood": comment_flood, "informational-forever": informational_forever,
    "length-beyond-body": length_beyond_body, "deep-nesting": deep_nesting, "huge-integers": huge_integers,
    "many-models": many_models,
    "gzip-gigabytes": gzip_gigabytes(4 * GIB, 1), "gzip-members": gzip_gigabytes(4 * GIB, 8), "dribble": dribble,
    "flood-everything": flood_everything, "short-lines": short_lines, "short-ndjson-lines": short_ndjson_lines,
}


@dataclass
class HostileServer:
    """One hostile server on a free port of 127.0.0.1, a thread per connection."""

    behaviour: Behaviour
    listener: socket.socket = field(init=False)
    stopping: threading.Event = field(default_factory=threading.Event)
    targets: list[str] = field(default_factory=list)  # every request target received, exactly as it came
    requests: list[Req] = field(default_factory=list)  # every request received
    tls: ssl.SSLContext | None = None  # serve HTTPS with this context
    port: int = 0  # a free one unless told

    def __post_init__(self) -> None:
        self.listener = socket.socket()
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", self.port))
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
            if self.tls is not None:
                conn.settimeout(10)
                conn = self.tls.wrap_socket(conn, server_side=True)
            req = _read_request(conn)
            if req is not None:
                self.targets.append(req.target)
                self.requests.append(req)
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
    behaviour = long_stream(float(sys.argv[2])) if sys.argv[1] == "long-stream" else SERVERS[sys.argv[1]]
    with HostileServer(behaviour) as server:
        print(server.base_url, flush=True)
        time.sleep(RUN_FOR)
