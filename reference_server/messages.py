"""The Anthropic Messages API on the same engine: ``POST /v1/messages``, streamed as named events or answered with
one message object, and ``POST /v1/messages/count_tokens``.

A request is translated to a chat request (``system`` to a system message, text blocks to text, an assistant's
``tool_use`` blocks to tool calls and a user's ``tool_result`` blocks to tool messages, tools'
``input_schema`` to chat tools, ``tool_choice`` auto/any/tool/none to auto/required/named/none, ``stop_sequences``
to stop, ``thinking`` to a reasoning effort) and validated by the chat parser, so both routes refuse and constrain
alike (grammar-constrained tool input). The events follow Anthropic's "Streaming Messages": ``message_start`` (its
message with ``content: []`` and the input tokens), a ``ping``, each content block between
``content_block_start`` and ``content_block_stop`` (indices from 0; a thinking block's ``signature_delta`` before
its stop), ``message_delta`` with ``stop_reason`` and the cumulative output tokens, ``message_stop``; a failed
generation ends with an ``error`` event. Errors answer ``{"type": "error", "error": {"type", "message"}}`` with the
type Anthropic documents for the status. The key is taken from ``x-api-key`` or ``Authorization: Bearer``.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from reference_server.protocol import APIError, ChatRequest, parse_chat

if TYPE_CHECKING:
    from reference_server.app import Server

KNOWN = frozenset({
    "model", "messages", "max_tokens", "system", "stream", "temperature", "top_p", "top_k", "stop_sequences",
    "tools", "tool_choice", "metadata", "thinking", "service_tier", "container", "mcp_servers", "context_management",
    "output_config",  # Messages, "output_config" ({effort, format}): Claude Code sends {effort: high}
})
# Errors, "HTTP errors": the type of each status
TYPES = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error", 404: "not_found_error",
         408: "timeout_error", 413: "request_too_large", 415: "invalid_request_error", 422: "invalid_request_error",
         429: "rate_limit_error", 500: "api_error", 503: "overloaded_error", 529: "overloaded_error"}
REASONS = {"stop": "end_turn", "length": "max_tokens", "tool_calls": "tool_use"}


def error_body(status: int, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": TYPES.get(status, "api_error" if status >= 500 else
                                                          "invalid_request_error"), "message": message}}


def error_response(exc: APIError, headers: dict[str, str]) -> JSONResponse:
    status = 404 if exc.code == "model_not_found" else exc.status
    return JSONResponse(error_body(status, exc.message), status_code=status, headers={**headers, **exc.headers})


def _bad(message: str) -> APIError:
    return APIError(400, message, "invalid_request_error")


def _text(content: Any, where: str) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list) and all(isinstance(b, dict) and b.get("type") == "text"
                                         and isinstance(b.get("text"), str) for b in content):
        return "".join(b["text"] for b in content)
    raise _bad(f"{where}: a string or a list of text blocks")


def _turns(history: Any) -> list[dict[str, Any]]:
    """Messages turns as chat messages."""
    if not isinstance(history, list) or not history:
        raise _bad("messages: a non-empty list")
    out: list[dict[str, Any]] = []
    for n, turn in enumerate(history):
        if isinstance(turn, dict) and turn.get("role") == "system":
            # Claude Code 2.1.332 sends system turns inside messages (with the beta mid-conversation-tool-changes);
            # served as a system message where it stands
            out.append({"role": "system", "content": _text(turn.get("content"), f"messages.{n}.content")})
            continue
        if not isinstance(turn, dict) or turn.get("role") not in ("user", "assistant"):
            role = turn.get("role") if isinstance(turn, dict) else None
            raise _bad(f"messages.{n}.role: Input should be 'user' or 'assistant' (got {str(role)[:40]!r})")
        content = turn.get("content")
        if isinstance(content, str):
            out.append({"role": turn["role"], "content": content})
            continue
        if not isinstance(content, list):
            raise _bad(f"messages.{n}.content: a string or a list of content blocks")
        texts, calls, results = [], [], []
        for m, block in enumerate(content):
            kind = block.get("type") if isinstance(block, dict) else None
            if kind == "text" and isinstance(block.get("text"), str):
                texts.append(block["text"])
            elif kind in ("thinking", "redacted_thinking"):
                continue  # a thinking block sent back: not part of the prompt here
            elif kind == "tool_use" and turn["role"] == "assistant":
                calls.append({"id": str(block.get("id", "")), "type": "function", "function": {
                    "name": str(block.get("name", "")), "arguments": json.dumps(block.get("input", {}))}})
            elif kind == "tool_result" and turn["role"] == "user":
                value = block.get("content", "")
                results.append({"role": "tool", "tool_call_id": str(block.get("tool_use_id", "")),
                                "content": value if isinstance(value, str) else _text(value, f"messages.{n}.content."
                                                                                             f"{m}.content")})
            else:
                raise _bad(f"messages.{n}.content.{m}: a content block this server does not take ({str(kind)[:40]})")
        out.extend(results)
        if texts or calls or not results:
            message: dict[str, Any] = {"role": turn["role"], "content": "".join(texts)}
            if calls:
                message["tool_calls"] = calls
            out.append(message)
    return out


def _tools(tools: Any) -> list[dict[str, Any]] | None:
    if tools is None:
        return None
    if not isinstance(tools, list):
        raise _bad("tools: a list")
    out = []
    for n, t in enumerate(tools):
        if not isinstance(t, dict) or not isinstance(t.get("name"), str) or not isinstance(t.get("input_schema"), dict):
            raise _bad(f"tools.{n}: {{name, input_schema}}")
        out.append({"type": "function", "function": {"name": t["name"], "description": t.get("description", ""),
                                                      "parameters": t["input_schema"]}})
    return out


def _tool_choice(value: Any) -> Any:
    if value is None:
        return None
    kind = value.get("type") if isinstance(value, dict) else None
    if kind == "auto":
        return "auto"
    if kind == "any":
        return "required"
    if kind == "none":
        return "none"
    if kind == "tool" and isinstance(value.get("name"), str):
        return {"type": "function", "function": {"name": value["name"]}}
    raise _bad("tool_choice: {type: auto | any | tool (with a name) | none}")


def parse_messages(body: Any, model_id: str, count_only: bool = False) -> ChatRequest:
    """A Messages request as the chat request the engine runs."""
    if not isinstance(body, dict):
        raise _bad("the body must be a JSON object")
    unknown = sorted(set(body) - KNOWN)
    if unknown:
        raise _bad(f"{unknown[0]}: Extra inputs are not permitted")
    max_tokens = body.get("max_tokens")
    if not count_only and (not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1):
        raise _bad("max_tokens: Field required" if max_tokens is None else "max_tokens: a positive integer")
    history = _turns(body.get("messages"))
    if "system" in body:
        history.insert(0, {"role": "system", "content": _text(body["system"], "system")})
    thinking = body.get("thinking")
    effort = None
    if thinking is not None:
        if not isinstance(thinking, dict) or thinking.get("type") not in ("enabled", "disabled", "adaptive"):
            raise _bad("thinking: {type: enabled, budget_tokens} or {type: disabled}")
        effort = "medium" if thinking["type"] != "disabled" else None
    chat: dict[str, Any] = {
        "model": body.get("model"), "messages": history, "stream": bool(body.get("stream", False)),
        "max_tokens": max_tokens if not count_only else None, "temperature": body.get("temperature"),
        "top_p": body.get("top_p"), "top_k": body.get("top_k"), "tools": _tools(body.get("tools")),
        "tool_choice": _tool_choice(body.get("tool_choice")), "stop": body.get("stop_sequences") or None,
        "reasoning_effort": effort,
    }
    if chat["tool_choice"] == "none" and chat["tools"]:
        chat["tools"], chat["tool_choice"] = None, None  # a tool_use block cannot follow: no tool in the prompt
    return parse_chat({k: v for k, v in chat.items() if v is not None}, model_id)


def signature(text: str) -> str:
    """The thinking block's signature: a digest of its text (the server can tell its own thinking when it comes
    back)."""
    return hashlib.sha256(text.encode()).hexdigest()


class Builder:
    """The content blocks, built from the engine's deltas; each step returns the events it makes."""

    def __init__(self) -> None:
        self.blocks: list[dict[str, Any]] = []
        self.open_kind = ""
        self.tool_index: int | None = None
        self.text = ""

    def delta(self, kind: str, text: str, index: int = 0, call_id: str | None = None,
              name: str | None = None) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        if kind == "tool" and (self.open_kind != "tool" or index != self.tool_index):
            out += self.close()
            self.tool_index = index
            out += self._start({"type": "tool_use", "id": call_id or f"toolu_{uuid.uuid4().hex[:24]}",
                                "name": name or "", "input": {}}, "tool")
        elif kind == "content" and self.open_kind != "content":
            out += self.close()
            out += self._start({"type": "text", "text": ""}, "content")
        elif kind == "reasoning" and self.open_kind != "reasoning":
            out += self.close()
            out += self._start({"type": "thinking", "thinking": "", "signature": ""}, "reasoning")
        if kind == "tool" and not self.text.strip():
            # whitespace before the input's JSON value is insignificant, and Anthropic's SDKs parse every partial_json
            # they have joined (anthropic-python's jiter refuses one that is only whitespace): it is not sent
            text = text.lstrip()
        if not text:
            return out
        self.text += text
        delta = ({"type": "input_json_delta", "partial_json": text} if kind == "tool" else
                 {"type": "text_delta", "text": text} if kind == "content" else
                 {"type": "thinking_delta", "thinking": text})
        out.append({"type": "content_block_delta", "index": len(self.blocks) - 1, "delta": delta})
        return out

    def _start(self, block: dict[str, Any], kind: str) -> list[dict[str, Any]]:
        self.blocks.append(dict(block))
        self.open_kind, self.text = kind, ""
        return [{"type": "content_block_start", "index": len(self.blocks) - 1, "content_block": block}]

    def close(self) -> list[dict[str, Any]]:
        if not self.open_kind:
            return []
        index, block, out = len(self.blocks) - 1, self.blocks[-1], []
        if self.open_kind == "tool":
            try:
                block["input"] = json.loads(self.text) if self.text.strip() else {}
            except ValueError:
                block["input"] = {}
        elif self.open_kind == "content":
            block["text"] = self.text
        else:
            block["thinking"], block["signature"] = self.text, signature(self.text)
            out.append({"type": "content_block_delta", "index": index,
                        "delta": {"type": "signature_delta", "signature": block["signature"]}})
        out.append({"type": "content_block_stop", "index": index})
        self.open_kind = ""
        return out


def routes(server: Server) -> list[Route]:
    def check_key(request: Request) -> None:
        key = server.api_key
        if key and request.headers.get("x-api-key") != key and request.headers.get("authorization") != f"Bearer {key}":
            raise APIError(401, "invalid x-api-key", "authentication_error")

    async def create(request: Request) -> Response:
        from reference_server.app import SSE_HEADERS, read_json

        headers = server.request_ids(request)
        try:
            check_key(request)
            req = parse_messages(await read_json(request), server.engine.model_id)
        except APIError as exc:
            return error_response(exc, headers)
        job = await server.chat_job(req, request.headers.get("x-request-id", ""))
        if isinstance(job, APIError):
            return error_response(job, headers)
        message: dict[str, Any] = {"id": f"msg_{uuid.uuid4().hex[:24]}", "type": "message", "role": "assistant", "content": [],
                   "model": server.engine.model_id, "stop_reason": None, "stop_sequence": None}
        builder = Builder()
        if req.stream:
            return StreamingResponse(sse(server, job, req, message, builder), media_type="text/event-stream",
                                     headers={**SSE_HEADERS, **headers})
        final: dict[str, Any] = {}
        async for event in events(server, job, req, message, builder):
            if event["type"] == "error":
                return JSONResponse(event, status_code=500, headers=headers)
            if event["type"] == "message_delta":
                final = {**message, "content": builder.blocks, **event["delta"],
                         "usage": {**message["usage"], **event["usage"]}}
        return JSONResponse(final, headers=headers)

    async def count(request: Request) -> Response:
        from reference_server.app import read_json

        headers = server.request_ids(request)
        try:
            check_key(request)
            req = parse_messages(await read_json(request), server.engine.model_id, count_only=True)
            tokens = len(server.prompt(req))
        except APIError as exc:
            return error_response(exc, headers)
        return JSONResponse({"input_tokens": tokens}, headers=headers)

    return [Route("/v1/messages", create, methods=["POST"]),
            Route("/v1/messages/count_tokens", count, methods=["POST"])]


async def events(server: Server, job: Any, req: ChatRequest, message: dict[str, Any],
                 b: Builder) -> AsyncIterator[dict[str, Any]]:
    message["usage"] = {"input_tokens": len(job.prompt), "output_tokens": 0,
                        "cache_read_input_tokens": job.cached, "cache_creation_input_tokens": 0}
    yield {"type": "message_start", "message": {**message, "usage": dict(message["usage"])}}
    yield {"type": "ping"}
    async for kind, value in server.outputs(job, req):
        if kind == "delta":
            for event in b.delta(value.kind, value.text, value.index, value.call_id, value.name):
                yield event
        elif kind == "error":
            for event in b.close():
                yield event
            yield error_body(500, str(value))
            return
        else:
            reason, count, _prompt, _cached = value
            for event in b.close():
                yield event
            stop = "stop_sequence" if reason == "stop" and job.stop_sequence is not None else REASONS.get(reason,
                                                                                                         "end_turn")
            yield {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": job.stop_sequence
                                                      if stop == "stop_sequence" else None},
                   "usage": {"output_tokens": count}}
            yield {"type": "message_stop"}


async def sse(server: Server, job: Any, req: ChatRequest, message: dict[str, Any], b: Builder) -> AsyncIterator[bytes]:
    async for event in events(server, job, req, message, b):
        yield f"event: {event['type']}\ndata: ".encode() + json.dumps(event, ensure_ascii=False).encode() + b"\n\n"
