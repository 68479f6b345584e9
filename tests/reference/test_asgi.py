"""ASGI level: a client that disconnects mid-stream stops the generation within a token."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from reference_server.app import build_app
from reference_server.engine import MODEL_ID, Engine

LONG = {"model": MODEL_ID, "messages": [{"role": "user", "content": "a long story"}], "stream": True,
        "max_tokens": 150_000}


async def disconnect_after_first_event(engine: Engine) -> list[bytes]:
    app = build_app(engine)
    body = json.dumps(LONG).encode()
    sent: list[bytes] = []
    first = asyncio.Event()
    scope: dict[str, Any] = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST",
                             "path": "/v1/chat/completions", "raw_path": b"/v1/chat/completions", "query_string": b"",
                             "headers": [(b"content-type", b"application/json"),
                                         (b"content-length", str(len(body)).encode())], "server": ("t", 80),
                             "client": ("c", 1), "scheme": "http", "root_path": ""}
    messages = [{"type": "http.request", "body": body, "more_body": False}]

    async def receive() -> dict[str, Any]:
        if messages:
            return messages.pop(0)
        await first.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.body" and message.get("body"):
            sent.append(message["body"])
            first.set()

    await app(scope, receive, send)
    return sent


def test_disconnect_mid_stream_frees_the_slot(engine: Engine) -> None:
    before = engine.health()
    sent = asyncio.run(disconnect_after_first_event(engine))
    assert sent and sent[0].startswith(b"data: ")
    for _ in range(200):
        state = engine.health()
        if state["running"] == 0 and state["cancelled"] > before["cancelled"]:
            break
        asyncio.run(asyncio.sleep(0.01))
    state = engine.health()
    assert state["running"] == 0 and state["admitted"] == 0
    assert state["cancelled"] == before["cancelled"] + 1
    assert b"[DONE]" not in b"".join(sent)
