"""The reference server: Starlette over the mlx-lm engine, the protocol exactly as the rulebook says.

Routes: POST /v1/chat/completions (SSE or JSON), POST /v1/responses (reference_server.responses),
POST /v1/chat/completions/{id}/cancel,
GET /v1/models, GET /v1/models/{id}, GET /health, and Ollama's /api/chat, /api/generate, /api/tags.
"""

from __future__ import annotations

import asyncio
import json
import re
import socket
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from conformance.protocols import REGISTRY, brought
from reference_server.engine import Engine, Job, Pace, QueueFull
from reference_server.parser import Delta, OutputParser
from reference_server.protocol import APIError, ChatRequest, parse_chat

MAX_BODY = 8 * 1024 * 1024
SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
MAX_NESTING = 64  # arrays and objects; a deeper body is refused before anything reads it


def nesting(value: Any) -> int:
    """How deep arrays and objects nest in a parsed JSON value (iteratively: no recursion to exhaust)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (list, dict)):
            deepest = max(deepest, depth)
            stack.extend((child, depth + 1) for child in (item.values() if isinstance(item, dict) else item))
    return deepest


def error_response(exc: APIError, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse(exc.body(), status_code=exc.status, headers={**(headers or {}), **exc.headers})


REQUEST_TIMEOUT = 10.0  # seconds for a whole request head, and again for its body


def bounded_h11(timeout: float) -> type:
    """uvicorn's h11 protocol, closing a connection whose request head has not arrived within ``timeout``."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class BoundedH11(H11Protocol):
        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            self._head_timer = self.loop.call_later(timeout, self._head_expired)

        def _head_expired(self) -> None:
            if self.cycle is None and not self.transport.is_closing():
                self.transport.close()

        def connection_lost(self, exc: Exception | None) -> None:
            self._head_timer.cancel()
            super().connection_lost(exc)

    return BoundedH11


async def _read_body(request: Request) -> bytearray:
    body = bytearray()
    async for piece in request.stream():
        body += piece
        if len(body) > MAX_BODY:
            raise APIError(413, f"the body is over {MAX_BODY} bytes", "request_too_large")
    return body


async def read_json(request: Request, any_media_type: bool = False) -> Any:
    """The body as JSON: 415 for another media type, 413 past the limit, 408 when it does not arrive in
    time, 400 for malformed or too deeply nested JSON. (``any_media_type``: the self-test's defect of parsing
    whatever is labelled text/plain.)"""
    ctype = request.headers.get("content-type", "application/json").split(";")[0].strip().lower()
    if ctype != "application/json" and not (any_media_type and ctype == "text/plain"):
        raise APIError(415, f"Content-Type must be application/json, not {ctype!r}", "unsupported_media_type")
    length = request.headers.get("content-length")
    if length is not None and length.isdigit() and int(length) > MAX_BODY:
        raise APIError(413, f"the body is over {MAX_BODY} bytes", "request_too_large")
    try:
        body = await asyncio.wait_for(_read_body(request), REQUEST_TIMEOUT)
    except asyncio.TimeoutError:
        raise APIError(408, f"the body did not arrive within {REQUEST_TIMEOUT:g} s", "request_timeout") from None
    try:
        text = body.decode("utf-8")  # strict: json.loads(bytes) would let encoded surrogates through
    except UnicodeDecodeError as exc:
        raise APIError(400, f"the body is not valid UTF-8: {exc}", "invalid_json") from None
    try:
        value = json.loads(text)
    except RecursionError:  # the C decoder refuses depth past the interpreter's limit
        raise APIError(400, f"the body nests deeper than {MAX_NESTING} levels", "invalid_value") from None
    except ValueError as exc:
        raise APIError(400, f"the body is not valid JSON: {exc}", "invalid_json") from None
    depth = nesting(value)
    if depth > MAX_NESTING:
        raise APIError(400, f"the body nests {depth} levels deep; at most {MAX_NESTING} are taken", "invalid_value")
    if SURROGATE_ESCAPE.search(text):  # an escaped pair is text; a lone surrogate is not
        try:
            json.dumps(value, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            raise APIError(400, "the body holds a lone surrogate escape (\\ud800-\\udfff), which is not text",
                           "invalid_json") from None
    return value


class Server:
    """Request handling over one engine."""

    def __init__(self, engine: Engine, api_key: str | None = None) -> None:
        self.engine = engine
        self.api_key = api_key
        self.created = int(time.time())

    def check_key(self, request: Request) -> None:
        if self.api_key and request.headers.get("authorization") != f"Bearer {self.api_key}":
            raise APIError(401, "a valid Authorization: Bearer key is required", "invalid_api_key",
                           type_="authentication_error")

    def request_ids(self, request: Request) -> dict[str, str]:
        rid = request.headers.get("x-request-id") or f"req_{uuid.uuid4().hex[:20]}"
        return {"X-Request-ID": rid, "OpenAI-Request-ID": rid}

    def prompt(self, req: ChatRequest) -> list[int]:
        """Render and tokenize; 400 context_length_exceeded before any generation.

        A prompt longer in bytes than the context times the longest token cannot fit, so it is
        refused without tokenizing megabytes first.
        """
        size = sum(len(json.dumps(m.get("content"), ensure_ascii=False).encode()) for m in req.messages)
        if size > self.engine.max_context * self.engine.max_token_bytes:
            raise APIError(400, f"This model's maximum context length is {self.engine.max_context} tokens; the "
                           f"messages ({size} bytes) cannot fit.", "context_length_exceeded", "messages")
        kwargs: dict[str, Any] = {"enable_thinking": req.reasoning, "json_mode": req.response_format is not None}
        if req.tools:
            kwargs.update(tools=req.tools, tool_choice=req.tool_choice if isinstance(req.tool_choice, str) else "required")
        prompt = list(self.engine.tokenizer.apply_chat_template(req.messages, add_generation_prompt=True, **kwargs))
        wanted = req.max_tokens or 1
        if len(prompt) + wanted > self.engine.max_context:
            raise APIError(400, f"This model's maximum context length is {self.engine.max_context} tokens; the "
                           f"prompt has {len(prompt)} and {wanted} more were asked for.", "context_length_exceeded",
                           "messages")
        return prompt

    def processors(self, req: ChatRequest, prompt_len: int) -> list[Any]:
        from reference_server.grammar import GrammarError, GrammarProcessor

        grammars = self.engine.grammars
        try:
            if req.tools and req.tool_choice != "none":
                grammar = grammars.tools(req.tools, req.tool_choice, req.parallel_tool_calls)
            elif req.response_format is not None:
                grammar = grammars.json_schema(req.response_format["schema"])
            else:
                return []
            matcher = grammars.matcher(grammar)
        except (GrammarError, ValueError) as exc:
            raise APIError(400, f"the schema cannot be enforced: {exc}", "invalid_tool_schema", "tools") from None
        return [GrammarProcessor(matcher, prompt_len, len(self.engine.tokenizer.get_vocab()))]

    async def chat(self, request: Request) -> Response:
        headers = self.request_ids(request)
        try:
            self.check_key(request)
            req = parse_chat(await read_json(request, bool(self.engine.faults.get("accept_text_plain"))),
                             self.engine.model_id)
        except APIError as exc:
            return error_response(exc, headers)
        job = await self.chat_job(req, request.headers.get("x-request-id", ""))
        if isinstance(job, APIError):
            return error_response(job, headers)
        meta = {"id": f"chatcmpl-{uuid.uuid4().hex[:24]}", "created": int(time.time()), "model": self.engine.model_id}
        if req.stream:
            return StreamingResponse(self.sse(job, req, meta), media_type="text/event-stream",
                                     headers={**SSE_HEADERS, **headers})
        try:
            return JSONResponse(await self.complete(job, req, meta), headers=headers)
        except APIError as exc:
            return error_response(exc, headers)

    async def chat_job(self, req: ChatRequest, request_id: str = "") -> Job | APIError:
        """Admit, render, check the context, build the grammar and submit; or the error to answer."""
        try:
            try:
                self.engine.admit()  # before prompt rendering, as seed 001 says
            except QueueFull:
                raise APIError(429, "the queue is full; retry shortly", "queue_full", type_="server_busy",
                               headers={"Retry-After": "1"}) from None
            try:
                prompt = self.prompt(req)
                job = Job(prompt=prompt, max_tokens=req.max_tokens or self.engine.max_context - len(prompt),
                          temperature=req.temperature, top_p=req.top_p, top_k=req.top_k, seed=req.seed,
                          processors=self.processors(req, len(prompt)) + penalty(req.repetition_penalty),
                          loop=asyncio.get_running_loop(), events=asyncio.Queue(), request_id=request_id)
            except BaseException:
                self.engine.release()
                raise
        except APIError as exc:
            return exc
        self.engine.submit(job)
        return job

    async def outputs(self, job: Job, req: ChatRequest) -> AsyncIterator[tuple[str, Any]]:
        """The job's deltas, then ("finish", (reason, tokens)) or ("error", message)."""
        parser = OutputParser(stop=req.stop, tools=bool(req.tools) and req.tool_choice != "none")
        assert job.events is not None
        ended = False
        try:
            while True:
                kind, value = await job.events.get()
                if kind == "text":
                    for delta in parser.feed(value):
                        yield "delta", delta
                    if parser.stopped:
                        job.stop_sequence = parser.matched
                        job.stop("stop")
                elif kind == "error":
                    ended = True
                    yield "error", value
                    return
                else:
                    ended = True
                    for delta in parser.close():
                        yield "delta", delta
                    reason, count = value
                    if parser.calls and reason == "stop":
                        reason = "tool_calls"
                    yield "finish", (reason, count, len(job.prompt), job.cached)
                    return
        finally:
            if not ended:
                job.stop("disconnect")  # the client left: the worker stops within one token
            self.engine.forget(job)
            self.engine.release()

    async def sse(self, job: Job, req: ChatRequest, meta: dict[str, Any]) -> AsyncIterator[bytes]:
        def chunk(choices: list[dict[str, Any]], **extra: Any) -> bytes:
            body = {**meta, "object": "chat.completion.chunk", "choices": choices, **extra}
            return b"data: " + json.dumps(body, ensure_ascii=False).encode() + b"\n\n"

        def delta(d: dict[str, Any]) -> bytes:
            return chunk([{"index": 0, "delta": d, "finish_reason": None}])

        yield delta({"role": "assistant", "content": ""})
        async for kind, value in self.outputs(job, req):
            if kind == "delta":
                yield delta(wire_delta(value))
            elif kind == "error":
                error = {"message": value, "type": "server_error", "param": None, "code": "generation_failed"}
                yield b"data: " + json.dumps({"error": error}).encode() + b"\n\n"
                return
            else:
                reason, count, prompt_tokens, cached = value
                yield chunk([{"index": 0, "delta": {}, "finish_reason": reason}])
                if req.include_usage:
                    yield chunk([], usage=usage(prompt_tokens, count, cached))
        yield b"data: [DONE]\n\n"

    async def complete(self, job: Job, req: ChatRequest, meta: dict[str, Any]) -> dict[str, Any]:
        content, reasoning, calls = "", "", {}  # type: ignore[var-annotated]
        finish: tuple[str, int, int, int] = ("stop", 0, len(job.prompt), 0)
        async for kind, value in self.outputs(job, req):
            if kind == "delta":
                if value.kind == "content":
                    content += value.text
                elif value.kind == "reasoning":
                    reasoning += value.text
                else:
                    call = calls.setdefault(value.index, {"id": value.call_id, "type": "function",
                                                          "function": {"name": value.name, "arguments": ""}})
                    call["function"]["arguments"] += value.text
            elif kind == "error":  # before any byte of the answer went out: a 5xx in the envelope
                raise APIError(500, value, "generation_failed", type_="server_error")
            else:
                finish = value
        message: dict[str, Any] = {"role": "assistant", "content": content if content or not calls else None}
        if reasoning:
            message["reasoning_content"] = reasoning
        if calls:
            message["tool_calls"] = [calls[i] for i in sorted(calls)]
        return {**meta, "object": "chat.completion", "choices": [
            {"index": 0, "message": message, "finish_reason": finish[0]}], "usage": usage(finish[2], finish[1], finish[3])}

    async def cancel(self, request: Request) -> Response:
        try:
            self.check_key(request)  # without the key, nobody cancels another client's stream
        except APIError as exc:
            return error_response(exc)
        rid = request.path_params["request_id"]
        if self.engine.cancel(rid):
            return JSONResponse({"cancelled": True, "request_id": rid})
        return JSONResponse({"cancelled": False, "request_id": rid}, status_code=404)

    async def models(self, request: Request) -> Response:
        try:
            self.check_key(request)
        except APIError as exc:
            return error_response(exc)
        entry = {"id": self.engine.model_id, "object": "model", "created": self.created, "owned_by": "chat-conformance",
                 "capabilities": ["text"]}  # seed 001: ["text", "image"] only with a vision pack, which this has not
        model_id = request.path_params.get("model_id")
        if model_id is None:
            return JSONResponse({"object": "list", "data": [entry]})
        if model_id != self.engine.model_id:
            return error_response(APIError(404, f"The model '{model_id}' does not exist", "model_not_found", "model"))
        return JSONResponse(entry)

    async def health(self, request: Request) -> Response:
        state = self.engine.health()
        return JSONResponse({"status": "ok", "model": self.engine.model_id, "capabilities": ["text"], "vision": "missing",
                             "max_context": self.engine.max_context,
                             "queue": {"limit": self.engine.queue_limit, "admitted": state["admitted"],
                                       "queued": state["queued"]},
                             "generations": {k: state[k] for k in ("running", "completed", "cancelled", "failed", "tokens")}})


def wire_delta(d: Delta) -> dict[str, Any]:
    if d.kind == "content":
        return {"content": d.text}
    if d.kind == "reasoning":
        return {"reasoning_content": d.text}
    piece: dict[str, Any] = {"index": d.index, "function": {"arguments": d.text}}
    if d.call_id is not None:
        piece.update(id=d.call_id, type="function")
        piece["function"] = {"name": d.name, "arguments": d.text}
    return {"tool_calls": [piece]}


def penalty(value: float | None) -> list[Any]:
    """mlx-lm's repetition penalty as a logits processor (seed 001 lists repetition_penalty as supported)."""
    if value is None or value == 1.0:
        return []
    from mlx_lm.sample_utils import make_logits_processors

    return list(make_logits_processors(repetition_penalty=value))


def usage(prompt: int, completion: int, cached: int = 0) -> dict[str, Any]:
    """Token counts; ``cached_tokens`` the prompt tokens whose KV was reused (seed 001 "Prompt reuse")."""
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion,
            "prompt_tokens_details": {"cached_tokens": cached}}


def build_app(engine: Engine, api_key: str | None = None, protocols: frozenset[str] | None = None) -> Starlette:
    """The routes: chat's, the model list, /health, and each other protocol's (``reference_server/<name>.py``:
    ``routes(server)``, found by the registry). With ``protocols``, only those protocols' routes (a server of one
    protocol, as an Anthropic-only proxy or an Open Responses server is); the model list /v1/models is served where
    an OpenAI or Anthropic protocol is (Ollama lists its models at /api/tags)."""
    server = Server(engine, api_key)
    serves = protocols if protocols is not None else frozenset(REGISTRY)
    routes = [Route("/health", server.health, methods=["GET"])]
    if serves - {"ollama"}:
        routes += [Route("/v1/models", server.models, methods=["GET"]),
                   Route("/v1/models/{model_id:path}", server.models, methods=["GET"])]
    if "chat" in serves:
        routes += [Route("/v1/chat/completions", server.chat, methods=["POST"]),
                   Route("/v1/chat/completions/{request_id}/cancel", server.cancel, methods=["POST"])]
    routes += [route for module in brought("reference_server.{name}") if module.__name__.rsplit(".", 1)[1] in serves
               for route in module.routes(server)]
    return Starlette(routes=routes)


class RequestLog:
    """ASGI middleware: one line per request received ("METHOD PATH"), appended to a file as it comes (the tests of
    one-protocol runs read which routes a run asked for)."""

    def __init__(self, app: Any, path: Path) -> None:
        self.app, self.path = app, path

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope.get("type") == "http":
            with self.path.open("a", encoding="utf-8") as log:
                log.write(f"{scope.get('method', '')} {scope.get('path', '')}\n")
        await self.app(scope, receive, send)


def _raise_file_limit(connections: int) -> None:
    """Room for every connection it serves and the half-open ones its timeouts are closing."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = max(soft, min(hard if hard != resource.RLIM_INFINITY else 65536, 65536, 64 * connections))
    if want > soft:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
        except ValueError:  # not allowed here: serve with what there is
            pass


def run_server(model_dir: Path | None, host: str, port: int, max_context: int, queue_limit: int,
               api_key: str | None, fault: str | None = None, request_timeout: float = 10.0,
               max_connections: int = 256, pace: Pace | None = None, prompt_reuse: bool = True,
               protocols: frozenset[str] | None = None, request_log: Path | None = None) -> None:
    """Load the model, then open the port and print one ready line."""
    import uvicorn

    from reference_server.model import ensure

    chosen = None
    if fault is not None:
        from reference_server.fault_catalog import BY_NAME

        chosen = BY_NAME[fault]
    engine = Engine(model_dir or ensure(), max_context=max_context, queue_limit=queue_limit,
                    faults=chosen.engine if chosen else None,
                    pace=Pace(*chosen.engine["pace"]) if chosen and "pace" in chosen.engine else pace,
                    prompt_reuse=prompt_reuse)
    engine.start()
    app: Any = build_app(engine, api_key, protocols)
    if chosen is not None:
        from reference_server.faults import FaultLayer

        app = FaultLayer(app, chosen)
    if request_log is not None:
        app = RequestLog(app, request_log)
    global REQUEST_TIMEOUT
    REQUEST_TIMEOUT = request_timeout
    _raise_file_limit(max_connections)
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    # h11, not httptools: uvicorn's httptools protocol answers an HTTP/1.0 request with
    # Transfer-Encoding: chunked (DEVIATIONS A35), which the suite's TRN-008 catches.
    # A request head must arrive within the request timeout, idle keep-alive connections close after
    # 5 s, and past max_connections a new one gets 503: slow or idle clients cannot exhaust the server.
    config = uvicorn.Config(app, http=bounded_h11(request_timeout), log_level="warning", access_log=False,
                            timeout_graceful_shutdown=2, timeout_keep_alive=5, limit_concurrency=max_connections)
    print(f"reference server ready: http://{host}:{sock.getsockname()[1]}/v1 (model {engine.model_id})", flush=True)
    uvicorn.Server(config).run(sockets=[sock])
