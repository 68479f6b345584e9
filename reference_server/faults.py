"""Deliberate misbehaviour for the self-test, in one place, behind ``--fault NAME``; never on by default.

A fault wraps the reference server's ASGI app and changes exactly one thing: the request before
the server reads it, the status or headers, each SSE event (parsed, as a chunk) or its framing,
the JSON body, or one engine behaviour. Everything else stays conformant, so the suite must catch
the defect with one of its expected rules, and nothing else (a legal variation must pass).
"""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

Message = dict[str, Any]
Chunk = dict[str, Any]
State = dict[str, Any]
ASGIApp = Callable[[Message, Callable[[], Awaitable[Message]], Callable[[Message], Awaitable[None]]], Awaitable[None]]


@dataclass(frozen=True)
class Fault:
    """One named defect (or legal variation) and the rules that must catch it."""

    name: str
    expected: tuple[str, ...]
    source: str
    legal: bool = False
    request: Callable[[Any], Any] | None = None  # the parsed request body -> the body the server sees
    chunk: Callable[[Chunk, State], list[Any]] | None = None  # one SSE chunk -> chunks (dicts) or raw payloads
    done: Callable[[State], bytes] | None = None  # the [DONE] event's bytes
    frame: Callable[[bytes, State], bytes] | None = None  # the payload of one event -> its bytes on the wire
    headers: Callable[[list[tuple[bytes, bytes]], State], list[tuple[bytes, bytes]]] | None = None
    status: Callable[[int, State], int] | None = None
    body: Callable[[Any, State], Any] | None = None  # a JSON body (non-stream, errors, models) -> bytes or JSON
    ndjson: Callable[[Any, State], list[Any]] | None = None  # one Ollama frame -> frames (dicts or bytes)
    event: Callable[[Any, State], list[Any]] | None = None  # one named event's payload -> payloads or raw events
    paths: tuple[str, ...] = ("/v1/chat/completions",)
    engine: dict[str, Any] = field(default_factory=dict)
    buffer: bool = False  # send the whole stream in one piece, at the end
    split_bytes: bool = False  # send every byte in its own write
    respond: Callable[[bytes], tuple[int, bytes] | None] | None = None  # raw request body -> a canned answer
    refuse: Callable[[Any], tuple[int, dict[str, Any]] | None] | None = None  # parsed body -> (status, error)
    lacks: tuple[str, ...] = ()  # capabilities this (legal) server does not have: the self-test does not expect them
    error_delay: float = 0.0  # seconds a chat 4xx waits before its status line (a refusal after the work)
    profile: str = "openai"  # the dialect the self-test judges it under (a legal variation of that dialect)


def sse_frame(payload: bytes) -> bytes:
    return b"data: " + payload + b"\n\n"


def _replaying(data: bytes, receive: Callable[[], Awaitable[Message]]) -> Callable[[], Awaitable[Message]]:
    """A ``receive`` whose first message is ``data`` as the whole body; later calls go to ``receive``."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": data, "more_body": False}
        return await receive()

    return replay


class FaultLayer:
    """The ASGI wrapper that applies one fault."""

    def __init__(self, app: ASGIApp, fault: Fault) -> None:
        self.app, self.fault = app, fault

    async def __call__(self, scope: Message, receive: Callable[[], Awaitable[Message]],
                       send: Callable[[Message], Awaitable[None]]) -> None:
        fault = self.fault
        path = scope.get("path", "")
        if scope["type"] != "http" or not any(path.startswith(p) for p in fault.paths):
            await self.app(scope, receive, send)
            return
        if fault.respond is not None and scope["method"] == "POST":
            raw, receive = await self._buffer_request(receive)
            canned = fault.respond(raw)
            if canned is not None:  # the old failure, put back: a plain-text answer instead of the real one
                status, text = canned
                await send({"type": "http.response.start", "status": status,
                            "headers": [(b"content-type", b"text/plain; charset=utf-8")]})
                await send({"type": "http.response.body", "body": text})
                return
        if fault.refuse is not None and scope["method"] == "POST":
            raw, receive = await self._buffer_request(receive)
            try:
                refusal = fault.refuse(json.loads(raw))
            except ValueError:
                refusal = None
            if refusal is not None:  # a documented refusal: the error envelope, as the real server would send it
                status, error = refusal
                await send({"type": "http.response.start", "status": status,
                            "headers": [(b"content-type", b"application/json")]})
                await send({"type": "http.response.body", "body": json.dumps({"error": error}).encode()})
                return
        original: Any = None
        if fault.request is not None and scope["method"] == "POST":
            receive, original = await self._rewrite_request(receive)
        state: State = {"events": 0, "kind": "", "held": [], "status": 200, "path": path, "request": original}

        async def patched(message: Message) -> None:
            if message["type"] == "http.response.start":
                await self._start(message, state, send)
            elif message["type"] == "http.response.body":
                await self._body(message, state, send)
            else:
                await send(message)

        await self.app(scope, receive, patched)

    async def _buffer_request(self, receive: Callable[[], Awaitable[Message]],
                              ) -> tuple[bytes, Callable[[], Awaitable[Message]]]:
        """The whole request body, and a ``receive`` that hands the app the same body again."""
        raw = b""
        while True:
            message = await receive()
            raw += message.get("body", b"")
            if not message.get("more_body"):
                break
        return raw, _replaying(raw, receive)

    async def _rewrite_request(self, receive: Callable[[], Awaitable[Message]],
                               ) -> tuple[Callable[[], Awaitable[Message]], Any]:
        """The rewritten request's ``receive``, and the body the client sent (parsed, or its bytes)."""
        raw, _ = await self._buffer_request(receive)  # later messages come from the original receive
        assert self.fault.request is not None
        try:
            body = json.loads(raw)
        except ValueError:
            body = raw
        new = self.fault.request(body)
        return _replaying(new if isinstance(new, bytes) else json.dumps(new).encode(), receive), body

    async def _start(self, message: Message, state: State, send: Callable[[Message], Awaitable[None]]) -> None:
        headers = list(message.get("headers", []))
        ctype = dict(headers).get(b"content-type", b"")
        state["kind"] = "sse" if b"event-stream" in ctype else ("ndjson" if b"ndjson" in ctype else "json")
        state["status"] = message["status"]
        if self.fault.error_delay and 400 <= message["status"] < 500 and state["path"] == "/v1/chat/completions":
            await asyncio.sleep(self.fault.error_delay)
        if self.fault.status is not None:
            message = {**message, "status": self.fault.status(message["status"], state)}
        if self.fault.headers is not None:
            headers = self.fault.headers(headers, state)
        if state["kind"] == "json" and self.fault.body is not None:
            headers = [(k, v) for k, v in headers if k != b"content-length"]  # the body changes length
        state["start"] = {**message, "headers": headers}
        if not (state["kind"] == "json" and self.fault.body is not None):
            await send(state["start"])

    async def _body(self, message: Message, state: State, send: Callable[[Message], Awaitable[None]]) -> None:
        data = message.get("body", b"")
        more = message.get("more_body", False)
        if state["kind"] == "json" and self.fault.body is not None:
            state["held"].append(data)
            if more:
                return
            raw = b"".join(state["held"])
            try:
                value: Any = json.loads(raw)
            except ValueError:
                value = raw
            out = self.fault.body(value, state)
            payload = out if isinstance(out, bytes) else json.dumps(out).encode()
            start = state["start"]
            if "content-type" in state:
                start = {**start, "headers": [(k, v) for k, v in start["headers"] if k != b"content-type"]
                         + [(b"content-type", state["content-type"])]}
            await send(start)
            await send({"type": "http.response.body", "body": payload, "more_body": False})
            return
        if state["kind"] == "sse" and data:
            data = self._sse(data, state)
        elif state["kind"] == "ndjson" and data and self.fault.ndjson is not None:
            frames = self.fault.ndjson(json.loads(data), state)
            data = b"".join(f if isinstance(f, bytes) else json.dumps(f).encode() + b"\n" for f in frames)
        await self._emit(data, more, state, send)

    def _sse(self, data: bytes, state: State) -> bytes:
        fault = self.fault
        if data.startswith(b"event: ") and fault.event is not None:
            return self._named(data, state)
        if not data.startswith(b"data: "):
            return data
        payload = data[6:].rstrip(b"\n")
        frame = fault.frame or (lambda p, s: sse_frame(p))
        if payload == b"[DONE]":
            return fault.done(state) if fault.done is not None else frame(payload, state)
        items: list[Any] = [json.loads(payload)]
        if fault.chunk is not None and "error" not in items[0]:
            items = fault.chunk(items[0], state)
        out = b""
        for item in items:
            state["events"] += 1
            raw = item if isinstance(item, bytes) else json.dumps(item, ensure_ascii=False).encode()
            out += frame(raw, state)
        return out

    def _named(self, data: bytes, state: State) -> bytes:
        """A named event (the Responses API's ``event:`` then ``data:``) through the fault's ``event``: each payload
        it returns is written with its type as the event name, raw bytes as they are."""
        assert self.fault.event is not None
        _, _, rest = data.partition(b"\n")
        if not rest.startswith(b"data: "):
            return data
        out = b""
        for item in self.fault.event(json.loads(rest[6:].rstrip(b"\n")), state):
            state["events"] += 1
            if isinstance(item, bytes):
                out += item
            else:
                out += (f"event: {item.get('type')}\ndata: ".encode() + json.dumps(item, ensure_ascii=False).encode()
                        + b"\n\n")
        return out

    async def _emit(self, data: bytes, more: bool, state: State, send: Callable[[Message], Awaitable[None]]) -> None:
        if self.fault.buffer and state["kind"] == "sse":
            state["held"].append(data)
            if more:
                return
            data = b"".join(state["held"])
        if self.fault.split_bytes and state["kind"] == "sse" and len(data) > 1:
            for i in range(len(data)):
                await send({"type": "http.response.body", "body": data[i:i + 1], "more_body": True})
            if not more:
                await send({"type": "http.response.body", "body": b"", "more_body": False})
            return
        await send({"type": "http.response.body", "body": data, "more_body": more})


def _rand_id() -> str:
    return f"chatcmpl-{random.getrandbits(48):012x}"


def choice(chunk: Chunk) -> Chunk:
    choices = chunk.get("choices") or [{}]
    return choices[0] if isinstance(choices[0], dict) else {}


def delta(chunk: Chunk) -> Chunk:
    value = choice(chunk).get("delta")
    return value if isinstance(value, dict) else {}


def is_usage(chunk: Chunk) -> bool:
    return chunk.get("choices") == [] and chunk.get("usage") is not None


def is_finish(chunk: Chunk) -> bool:
    return bool(chunk.get("choices")) and choice(chunk).get("finish_reason") is not None


def edit(func: Callable[[Chunk, State], None]) -> Callable[[Chunk, State], list[Any]]:
    """A chunk fault from an in-place edit."""

    def apply(chunk: Chunk, state: State) -> list[Any]:
        func(chunk, state)
        return [chunk]

    return apply


def _set(path: tuple[str, ...], value: Any, when: Callable[[Chunk], bool] = lambda c: True
         ) -> Callable[[Chunk, State], list[Any]]:
    def apply(chunk: Chunk, state: State) -> None:
        if not when(chunk):
            return
        target: Any = chunk
        for key in path[:-1]:
            target = target["choices"][0] if key == "choice" else target.setdefault(key, {})
        target[path[-1]] = value(chunk, state) if callable(value) else value

    return edit(apply)


def on_type(kinds: tuple[str, ...] | str, func: Any) -> Any:
    """A named-event fault (the Responses and Messages APIs) that changes the events of these types (func: payload,
    state -> payloads)."""
    chosen = (kinds,) if isinstance(kinds, str) else kinds

    def apply(event: Any, state: State) -> list[Any]:
        return func(event, state) if isinstance(event, dict) and event.get("type") in chosen else [event]
    return apply
