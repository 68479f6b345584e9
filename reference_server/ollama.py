"""Ollama's native routes as ../shared/seeds/002 describes them: NDJSON frames with done and
done_reason, a terminal error object on failure, and /api/tags."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from reference_server.protocol import APIError, parse_chat

if TYPE_CHECKING:
    from reference_server.app import Server


def _now() -> str:
    return datetime.now(timezone.utc).isoformat().replace("+00:00", "Z")


def routes(server: Server) -> list[Route]:
    async def chat(request: Request) -> Response:
        return await run(server, request, chat_shape=True)

    async def generate(request: Request) -> Response:
        return await run(server, request, chat_shape=False)

    async def tags(request: Request) -> Response:
        try:
            server.check_key(request)
        except APIError as exc:
            return JSONResponse({"error": exc.message}, status_code=exc.status)
        return JSONResponse({"models": [{"name": server.engine.model_id, "model": server.engine.model_id,
                                         "modified_at": _now(), "size": 0, "details": {"format": "safetensors"}}]})

    return [Route("/api/chat", chat, methods=["POST"]), Route("/api/generate", generate, methods=["POST"]),
            Route("/api/tags", tags, methods=["GET"])]


async def run(server: Server, request: Request, chat_shape: bool) -> Response:
    from reference_server.app import read_json

    try:
        server.check_key(request)  # every generating route needs the key when one is set
        body = await read_json(request)
        if not isinstance(body, dict):
            raise APIError(400, "the body must be a JSON object", "invalid_type")
        messages = body.get("messages") if chat_shape else [{"role": "user", "content": body.get("prompt", "")}]
        raw_options = body.get("options")
        options: dict[str, Any] = raw_options if isinstance(raw_options, dict) else {}
        chat_body = {"model": body.get("model"), "messages": messages, "stream": True,
                     "max_tokens": options.get("num_predict"), "temperature": options.get("temperature"),
                     "seed": options.get("seed")}
        req = parse_chat(chat_body, server.engine.model_id)
    except APIError as exc:
        return JSONResponse({"error": exc.message}, status_code=exc.status)
    streaming = body.get("stream", True) is not False
    inner = await server.chat_job(req)
    if isinstance(inner, APIError):
        return JSONResponse({"error": inner.message}, status_code=inner.status)
    frames = frames_of(server, inner, req, chat_shape)
    if streaming:
        return StreamingResponse(frames, media_type="application/x-ndjson")
    last: dict[str, Any] = {}
    text = ""
    async for line in frames:
        last = json.loads(line)
        message: dict[str, Any] = last.get("message") or {}
        text += str(message.get("content", "") if chat_shape else last.get("response", ""))
    if "error" in last:
        return JSONResponse(last, status_code=500)
    if chat_shape:
        last["message"] = {"role": "assistant", "content": text}
    else:
        last["response"] = text
    return JSONResponse(last)


async def frames_of(server: Server, job: Any, req: Any, chat_shape: bool) -> AsyncIterator[bytes]:
    model = server.engine.model_id
    start = time.monotonic_ns()

    def frame(text: str, **extra: Any) -> bytes:
        body: dict[str, Any] = {"model": model, "created_at": _now()}
        if chat_shape:
            body["message"] = {"role": "assistant", "content": text}
        else:
            body["response"] = text
        return json.dumps({**body, **extra}, ensure_ascii=False).encode() + b"\n"

    async for kind, value in server.outputs(job, req):
        if kind == "delta" and value.kind == "content" and value.text:
            yield frame(value.text, done=False)
        elif kind == "error":
            yield json.dumps({"error": value}).encode() + b"\n"
            return
        elif kind == "finish":
            reason, count, prompt = value
            yield frame("", done=True, done_reason="length" if reason == "length" else "stop",
                        total_duration=time.monotonic_ns() - start, prompt_eval_count=prompt, eval_count=count)
