"""Ollama's native routes as ../shared/seeds/002 describes them: NDJSON frames with done and
done_reason, a terminal error object on failure, X-Request-ID on the streams, /api/pull's status
frames, and /api/tags (Ollama's own route, which seed 002 does not name)."""

from __future__ import annotations

import hashlib
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

    async def pull(request: Request) -> Response:
        return await pull_model(server, request)

    return [Route("/api/chat", chat, methods=["POST"]), Route("/api/generate", generate, methods=["POST"]),
            Route("/api/pull", pull, methods=["POST"]), Route("/api/tags", tags, methods=["GET"])]


_DIGESTS: dict[str, list[tuple[str, str, int]]] = {}


def _files(server: Server) -> list[tuple[str, str, int]]:
    """The served model's files: name, sha256 digest, size (hashed once)."""
    root = server.engine.model_dir
    key = str(root)
    if key not in _DIGESTS:
        files = sorted(p for p in root.iterdir() if p.is_file()) if root.is_dir() else []
        _DIGESTS[key] = [(p.name, "sha256:" + hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_size)
                         for p in files]
    return _DIGESTS[key]


async def pull_model(server: Server, request: Request) -> Response:
    """Seed 002's /api/pull frames for the model already here: status, digest, total and completed per file,
    then success. The server downloads nothing; any other name ends in an error frame."""
    from reference_server.app import read_json

    headers = {"X-Request-ID": request.headers.get("x-request-id") or f"req_{time.monotonic_ns()}"}
    try:
        server.check_key(request)
        body = await read_json(request)
        name = body.get("model", body.get("name")) if isinstance(body, dict) else None
        if not isinstance(name, str) or not name:
            raise APIError(400, "model is required", "invalid_value", "model")
    except APIError as exc:
        return JSONResponse({"error": exc.message}, status_code=exc.status, headers=headers)
    frames: list[dict[str, Any]] = [{"status": "pulling manifest"}]
    if name != server.engine.model_id:
        frames.append({"error": f"pull model manifest: {name} is not available here (this server downloads nothing)"})
    else:
        for file, digest, size in _files(server):
            frames.append({"status": f"pulling {file}", "digest": digest, "total": size, "completed": 0})
            frames.append({"status": f"pulling {file}", "digest": digest, "total": size, "completed": size})
        frames += [{"status": "verifying sha256 digest"}, {"status": "writing manifest"}, {"status": "success"}]
    if body.get("stream", True) is False:
        return JSONResponse(frames[-1], status_code=200 if "error" not in frames[-1] else 404, headers=headers)

    async def lines() -> AsyncIterator[bytes]:
        for f in frames:
            yield json.dumps(f).encode() + b"\n"

    return StreamingResponse(lines(), media_type="application/x-ndjson", headers=headers)


def _chat_messages(messages: Any) -> Any:
    """Ollama's history in chat's shape: a call's arguments are an object there (a JSON string in chat), a tool's
    result names its tool (tool_name) rather than a call id. Anything else is left for the chat validator."""
    if not isinstance(messages, list):
        return messages
    out: list[Any] = []
    ids: list[str] = []
    for n, msg in enumerate(messages):
        if not isinstance(msg, dict):
            out.append(msg)
            continue
        msg = dict(msg)
        calls = msg.get("tool_calls")
        if isinstance(calls, list) and calls:
            fixed = []
            for k, call in enumerate(calls):
                fn = call.get("function") if isinstance(call, dict) else None
                if isinstance(fn, dict) and not isinstance(fn.get("arguments", ""), str):
                    fn = {**fn, "arguments": json.dumps(fn["arguments"])}
                given = call.get("id") if isinstance(call, dict) else None
                ident = given if isinstance(given, str) else f"call_{n}_{k}"
                ids.append(ident)
                fixed.append({"id": ident, "type": "function", "function": fn} if isinstance(fn, dict) else call)
            msg["tool_calls"] = fixed
        elif not calls:
            msg.pop("tool_calls", None)
        if msg.get("role") == "tool":
            msg.pop("tool_name", None)
            if "tool_call_id" not in msg and ids:
                msg["tool_call_id"] = ids.pop(0)
        out.append(msg)
    return out


async def run(server: Server, request: Request, chat_shape: bool) -> Response:
    from reference_server.app import read_json

    headers = {"X-Request-ID": request.headers.get("x-request-id") or f"req_{time.monotonic_ns()}"}
    try:
        server.check_key(request)  # every generating route needs the key when one is set
        body = await read_json(request)
        if not isinstance(body, dict):
            raise APIError(400, "the body must be a JSON object", "invalid_type")
        messages = _chat_messages(body.get("messages")) if chat_shape else [
            {"role": "user", "content": body.get("prompt", "")}]
        raw_options = body.get("options")
        options: dict[str, Any] = raw_options if isinstance(raw_options, dict) else {}
        chat_body = {"model": body.get("model"), "messages": messages, "stream": True,
                     "max_tokens": options.get("num_predict"), "temperature": options.get("temperature"),
                     "seed": options.get("seed")}
        req = parse_chat(chat_body, server.engine.model_id)
    except APIError as exc:
        return JSONResponse({"error": exc.message}, status_code=exc.status, headers=headers)
    streaming = body.get("stream", True) is not False
    inner = await server.chat_job(req)
    if isinstance(inner, APIError):
        return JSONResponse({"error": inner.message}, status_code=inner.status, headers=headers)
    frames = frames_of(server, inner, req, chat_shape)
    if streaming:
        return StreamingResponse(frames, media_type="application/x-ndjson", headers=headers)
    last: dict[str, Any] = {}
    text = ""
    async for line in frames:
        last = json.loads(line)
        message: dict[str, Any] = last.get("message") or {}
        text += str(message.get("content", "") if chat_shape else last.get("response", ""))
    if "error" in last:
        return JSONResponse(last, status_code=500, headers=headers)
    if chat_shape:
        last["message"] = {"role": "assistant", "content": text}
    else:
        last["response"] = text
    return JSONResponse(last, headers=headers)


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
            reason, count, prompt, _cached = value
            yield frame("", done=True, done_reason="length" if reason == "length" else "stop",
                        total_duration=time.monotonic_ns() - start, prompt_eval_count=prompt, eval_count=count)
