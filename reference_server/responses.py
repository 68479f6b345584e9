"""The OpenAI Responses API on the same engine: ``POST /v1/responses``, streamed as semantic events or answered
with one response object.

A request is translated to a chat request (``input`` items to messages, ``instructions`` to a system message,
flat function tools to chat tools, ``text.format`` to ``response_format``) and validated by the chat parser, so
both routes refuse and constrain alike (grammar-constrained tools and JSON). The events follow OpenAI's
streaming-events reference: ``response.created``, ``response.in_progress``, each output item between
``output_item.added`` and ``output_item.done`` (a message's text inside its content part), one terminal event
(``completed``, ``incomplete`` with ``max_output_tokens``, or ``error`` then ``failed``), every event with
``event:`` equal to its ``type`` and a strictly increasing ``sequence_number``; then ``data: [DONE]``, as the
Open Responses specification ends a stream (OpenAI's SDKs stop at it). A response is stored unless the request
says ``store: false`` (OpenAI's default): the last STORED conversations, in memory, each its messages and its output;
``previous_response_id`` puts the stored turn before the new input (not its instructions, as at OpenAI) and an id
that names no stored response is refused with 400 ``previous_response_not_found``.
"""

from __future__ import annotations

import json
import time
import uuid
from collections import OrderedDict
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from reference_server.protocol import EFFORTS, APIError, ChatRequest, parse_chat

if TYPE_CHECKING:
    from reference_server.app import Server

KNOWN = frozenset({
    "model", "input", "instructions", "stream", "max_output_tokens", "temperature", "top_p", "tools", "tool_choice",
    "parallel_tool_calls", "text", "reasoning", "store", "metadata", "user", "previous_response_id", "truncation",
    "include", "service_tier", "safety_identifier", "prompt_cache_key", "stream_options", "background",
    "max_tool_calls", "top_logprobs",
    "client_metadata",  # Codex CLI sends it (a dict of strings about itself); nothing here reads it
})
INPUT_TEXT = ("input_text", "output_text", "text")
STORED = 256  # conversations kept for previous_response_id, the oldest dropped first


class Store:
    """Stored responses: the conversation each one ended (its input messages and its output as messages)."""

    def __init__(self, size: int = STORED) -> None:
        self.size = size
        self._kept: OrderedDict[str, list[dict[str, Any]]] = OrderedDict()

    def history(self, response_id: Any) -> list[dict[str, Any]]:
        if not isinstance(response_id, str) or response_id not in self._kept:
            shown = str(response_id)[:80]
            raise APIError(400, f"Previous response with id '{shown}' not found.", "previous_response_not_found",
                           "previous_response_id")
        return [dict(m) for m in self._kept[response_id]]

    def keep(self, response_id: str, messages: list[dict[str, Any]], output: list[dict[str, Any]]) -> None:
        turn = [m for m in messages if m["role"] != "system"]  # instructions are not carried over (OpenAI)
        for item in output:
            if item.get("type") == "message":
                text = "".join(p.get("text", "") for p in item.get("content", []) if isinstance(p, dict))
                turn.append({"role": "assistant", "content": text})
            elif item.get("type") == "function_call":
                turn.append({"role": "assistant", "content": None, "tool_calls": [{
                    "id": item["call_id"], "type": "function",
                    "function": {"name": item["name"], "arguments": item["arguments"]}}]})
        self._kept[response_id] = turn
        while len(self._kept) > self.size:
            self._kept.popitem(last=False)


def _bad(param: str, message: str, code: str = "invalid_value") -> APIError:
    return APIError(400, message, code, param)


def _content(value: Any, where: str) -> str:
    if isinstance(value, str):
        return value
    if not isinstance(value, list):
        raise _bad(where, "content must be a string or an array of input_text parts", "invalid_type")
    texts = []
    for part in value:
        if not isinstance(part, dict) or part.get("type") not in INPUT_TEXT or not isinstance(part.get("text"), str):
            if isinstance(part, dict) and part.get("type") == "input_image":
                raise APIError(400, "this model does not take images (no vision pack is loaded)", "unsupported_value",
                               where)
            raise _bad(where, "content parts must be input_text (or output_text) objects with text", "invalid_type")
        texts.append(part["text"])
    return "".join(texts)


def messages_of(input_: Any, instructions: Any, history: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """``input`` (a string, or message / function_call / function_call_output items) as chat messages, after the
    instructions and the stored conversation it continues."""
    messages: list[dict[str, Any]] = []
    if instructions is not None:
        if not isinstance(instructions, str):
            raise _bad("instructions", "instructions must be a string", "invalid_type")
        messages.append({"role": "system", "content": instructions})
    messages += history or []
    if input_ is None:
        raise _bad("input", "input is required", "missing_required_parameter")
    if isinstance(input_, str):
        return [*messages, {"role": "user", "content": input_}]
    if not isinstance(input_, list) or not input_:
        raise _bad("input", "input must be a string or a non-empty array of items", "invalid_type")
    for i, item in enumerate(input_):
        where = f"input[{i}]"
        if not isinstance(item, dict):
            raise _bad(where, "each input item must be an object", "invalid_type")
        kind = item.get("type", "message")
        if kind == "message":
            role = item.get("role")
            if role not in ("user", "assistant", "system", "developer"):
                raise _bad(f"{where}.role", "role must be user, assistant, system or developer")
            messages.append({"role": role, "content": _content(item.get("content"), f"{where}.content")})
        elif kind == "function_call":
            if not all(isinstance(item.get(k), str) for k in ("call_id", "name", "arguments")):
                raise _bad(where, "a function_call item needs call_id, name and arguments strings", "invalid_type")
            call = {"id": item["call_id"], "type": "function",
                    "function": {"name": item["name"], "arguments": item["arguments"]}}
            if messages and messages[-1]["role"] == "assistant" and messages[-1].get("tool_calls"):
                messages[-1]["tool_calls"].append(call)
            else:
                messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        elif kind == "function_call_output":
            if not isinstance(item.get("call_id"), str) or not isinstance(item.get("output"), str):
                raise _bad(where, "a function_call_output item needs call_id and output strings", "invalid_type")
            messages.append({"role": "tool", "tool_call_id": item["call_id"], "content": item["output"]})
        elif kind == "reasoning":
            continue  # a reasoning item sent back (Codex sends its encrypted_content back): not part of the prompt
        else:
            raise _bad(f"{where}.type", f"input items of type {str(kind)[:40]!r} are not supported", "unsupported_value")
    return messages


def _tools(value: Any) -> list[dict[str, Any]] | None:
    if value is None:
        return None
    if not isinstance(value, list):
        raise _bad("tools", "tools must be an array", "invalid_type")
    out = []
    for i, tool in enumerate(value):
        if not isinstance(tool, dict) or not isinstance(tool.get("type"), str):
            raise APIError(400, f"tools[{i}] must be a tool object with a type", "invalid_type", f"tools[{i}]")
        if tool["type"] == "namespace" and isinstance(tool.get("tools"), list):
            out += _tools(tool["tools"]) or []  # a namespace's tools (Codex CLI groups its sub-agent tools so)
            continue
        if tool["type"] != "function":
            # a hosted tool (web_search, file_search, ...): nothing here runs it, so the model is not offered it;
            # agents (Codex CLI) send web_search with every request, and refusing it would refuse them all
            continue
        function = {k: tool[k] for k in ("name", "description", "parameters") if k in tool}
        out.append({"type": "function", "function": function})
    return out or None


def _tool_choice(value: Any) -> Any:
    if value is None or value in ("auto", "none", "required"):
        return value
    if isinstance(value, dict) and value.get("type") == "function" and isinstance(value.get("name"), str):
        return {"type": "function", "function": {"name": value["name"]}}
    raise _bad("tool_choice", "tool_choice must be auto, none, required or {type: function, name}")


def _format(value: Any) -> Any:
    if value is None:
        return None
    fmt = value.get("format") if isinstance(value, dict) else None
    if fmt is None:
        return None
    if not isinstance(fmt, dict):
        raise _bad("text.format", "text.format must be an object", "invalid_type")
    if fmt.get("type") == "json_schema":
        return {"type": "json_schema", "json_schema": {k: fmt[k] for k in ("name", "schema", "strict") if k in fmt}}
    if fmt.get("type") in ("text", "json_object"):
        return {"type": fmt["type"]}
    raise _bad("text.format.type", "text.format.type must be text, json_object or json_schema")


def parse_responses(body: Any, model_id: str, store: Store | None = None) -> tuple[ChatRequest, dict[str, Any]]:
    """A Responses request as the chat request the engine runs, and the fields the response object echoes."""
    if not isinstance(body, dict):
        raise _bad("", "the body must be a JSON object", "invalid_type")
    body = {k: v for k, v in body.items() if v is not None}
    unknown = sorted(set(body) - KNOWN)
    if unknown:
        raise APIError(400, f"Unknown parameter: '{unknown[0]}'.", "unknown_parameter", unknown[0])
    previous = body.get("previous_response_id")
    history = (store or Store()).history(previous) if previous is not None else None
    if not isinstance(body.get("store", True), bool):
        raise _bad("store", "store must be a boolean", "invalid_type")
    reasoning = body.get("reasoning", {})
    effort = reasoning.get("effort") if isinstance(reasoning, dict) else None
    if not isinstance(reasoning, dict) or (effort is not None and effort not in EFFORTS):
        raise _bad("reasoning.effort", f"reasoning.effort must be one of {sorted(EFFORTS)}")
    chat: dict[str, Any] = {
        "model": body.get("model"), "messages": messages_of(body.get("input"), body.get("instructions"), history),
        "stream": body.get("stream", False), "max_completion_tokens": body.get("max_output_tokens"),
        "temperature": body.get("temperature"), "top_p": body.get("top_p"), "tools": _tools(body.get("tools")),
        "tool_choice": _tool_choice(body.get("tool_choice")), "parallel_tool_calls": body.get("parallel_tool_calls"),
        "response_format": _format(body.get("text")), "reasoning_effort": effort, "metadata": body.get("metadata"),
    }
    req = parse_chat({k: v for k, v in chat.items() if v is not None}, model_id)
    echo = {
        "instructions": body.get("instructions"), "max_output_tokens": body.get("max_output_tokens"),
        "tools": body.get("tools", []), "tool_choice": body.get("tool_choice", "auto"),
        "parallel_tool_calls": req.parallel_tool_calls, "temperature": req.temperature, "top_p": req.top_p,
        "text": body.get("text", {"format": {"type": "text"}}), "reasoning": {"effort": effort, "summary": None},
        "metadata": body.get("metadata", {}), "user": body.get("user"), "previous_response_id": previous,
        "store": body.get("store", True),
    }
    return req, echo


class Builder:
    """The output items, built from the engine's deltas; each step returns the events it makes."""

    def __init__(self, meta: dict[str, Any], store: Store | None = None,
                 messages: list[dict[str, Any]] | None = None) -> None:
        self.meta = meta
        self.store = store  # where the finished response is kept (None: store false)
        self.messages = messages or []
        self.seq = -1
        self.items: list[dict[str, Any]] = []
        self.open: dict[str, Any] | None = None
        self.open_kind = ""
        self.tool_index: int | None = None

    def event(self, kind: str, **fields: Any) -> dict[str, Any]:
        self.seq += 1
        return {"type": kind, "sequence_number": self.seq, **fields}

    def response(self, status: str, **extra: Any) -> dict[str, Any]:
        output = [dict(i) for i in self.items]
        if self.store is not None and status in ("completed", "incomplete"):
            self.store.keep(self.meta["id"], self.messages, output)
        return {**self.meta, "status": status, "output": output, **extra}

    def _where(self) -> dict[str, Any]:
        assert self.open is not None
        return {"item_id": self.open["id"], "output_index": len(self.items) - 1}

    def delta(self, kind: str, text: str, index: int = 0, call_id: str | None = None,
              name: str | None = None) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        if kind == "tool" and (self.open_kind != "tool" or index != self.tool_index):
            out += self.close("completed")
            self.tool_index = index
            out += self._add({"id": f"fc_{uuid.uuid4().hex[:24]}", "type": "function_call", "status": "in_progress",
                              "call_id": call_id or f"call_{uuid.uuid4().hex[:24]}", "name": name or "",
                              "arguments": ""}, "tool")
        elif kind == "content" and self.open_kind != "content":
            out += self.close("completed")
            out += self._add({"id": f"msg_{uuid.uuid4().hex[:24]}", "type": "message", "status": "in_progress",
                              "role": "assistant", "content": []}, "content")
            out.append(self.event("response.content_part.added", **self._where(), content_index=0,
                                  part={"type": "output_text", "text": "", "annotations": []}))
        elif kind == "reasoning" and self.open_kind != "reasoning":
            out += self.close("completed")
            out += self._add({"id": f"rs_{uuid.uuid4().hex[:24]}", "type": "reasoning", "status": "in_progress",
                              "summary": [], "content": []}, "reasoning")
            # the raw reasoning is a content part like output_text, announced before its deltas (openai-node's
            # ResponseStream throws "missing content at index 0" on a reasoning_text.delta of an unannounced part)
            out.append(self.event("response.content_part.added", **self._where(), content_index=0,
                                  part={"type": "reasoning_text", "text": ""}))
        assert self.open is not None
        if not text:
            return out
        if kind == "tool":
            self.open["arguments"] += text
            out.append(self.event("response.function_call_arguments.delta", **self._where(), delta=text))
        elif kind == "content":
            self.open["_text"] = self.open.get("_text", "") + text
            out.append(self.event("response.output_text.delta", **self._where(), content_index=0, delta=text,
                                  logprobs=[]))
        else:
            self.open["_text"] = self.open.get("_text", "") + text
            out.append(self.event("response.reasoning_text.delta", **self._where(), content_index=0, delta=text))
        return out

    def _add(self, item: dict[str, Any], kind: str) -> list[dict[str, Any]]:
        self.items.append(item)
        self.open, self.open_kind = item, kind
        return [self.event("response.output_item.added", output_index=len(self.items) - 1, item=dict(item))]

    def close(self, status: str) -> list[dict[str, Any]]:
        item, kind = self.open, self.open_kind
        if item is None:
            return []
        out: list[dict[str, Any]] = []
        where = self._where()
        text = item.pop("_text", "")
        if kind == "content":
            part = {"type": "output_text", "text": text, "annotations": []}
            out.append(self.event("response.output_text.done", **where, content_index=0, text=text, logprobs=[]))
            out.append(self.event("response.content_part.done", **where, content_index=0, part=part))
            item["content"] = [part]
        elif kind == "reasoning":
            part = {"type": "reasoning_text", "text": text}
            out.append(self.event("response.reasoning_text.done", **where, content_index=0, text=text))
            out.append(self.event("response.content_part.done", **where, content_index=0, part=part))
            item["content"] = [part]
        else:
            out.append(self.event("response.function_call_arguments.done", **where, name=item["name"],
                                  arguments=item["arguments"]))
        item["status"] = status
        out.append(self.event("response.output_item.done", output_index=where["output_index"], item=dict(item)))
        self.open, self.open_kind = None, ""
        return out


def usage(prompt: int, completion: int, cached: int) -> dict[str, Any]:
    return {"input_tokens": prompt, "input_tokens_details": {"cached_tokens": cached}, "output_tokens": completion,
            "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": prompt + completion}


def routes(server: Server) -> list[Route]:
    async def create(request: Request) -> Response:
        from reference_server.app import SSE_HEADERS, error_response, read_json

        headers = server.request_ids(request)
        try:
            server.check_key(request)
            req, echo = parse_responses(await read_json(request), server.engine.model_id, store)
        except APIError as exc:
            return error_response(exc, headers)
        job = await server.chat_job(req, request.headers.get("x-request-id", ""))
        if isinstance(job, APIError):
            return error_response(job, headers)
        created = int(time.time())
        meta = {"id": f"resp_{uuid.uuid4().hex[:32]}", "object": "response", "created_at": created,
                "completed_at": None, "model": server.engine.model_id, "error": None,
                "incomplete_details": None, "truncation": "disabled", "presence_penalty": 0.0,
                "frequency_penalty": 0.0, "top_logprobs": 0, "usage": None, "max_tool_calls": None,
                "background": False, "service_tier": "default", "safety_identifier": None, "prompt_cache_key": None,
                **echo}
        builder = Builder(meta, store if echo["store"] else None, req.messages)
        if req.stream:
            return StreamingResponse(sse(server, job, req, builder), media_type="text/event-stream",
                                     headers={**SSE_HEADERS, **headers})
        final: dict[str, Any] = {}
        async for event in events(server, job, req, builder):
            if event["type"] == "error":
                return error_response(APIError(500, event["message"], "generation_failed", type_="server_error"), headers)
            if event["type"] in ("response.completed", "response.incomplete", "response.failed"):
                final = event["response"]
        return JSONResponse(final, headers=headers)

    store = Store()
    return [Route("/v1/responses", create, methods=["POST"])]


async def events(server: Server, job: Any, req: ChatRequest, b: Builder) -> AsyncIterator[dict[str, Any]]:
    yield b.event("response.created", response=b.response("in_progress"))
    yield b.event("response.in_progress", response=b.response("in_progress"))
    async for kind, value in server.outputs(job, req):
        if kind == "delta":
            for event in b.delta(value.kind, value.text, value.index, value.call_id, value.name):
                yield event
        elif kind == "error":
            for event in b.close("incomplete"):
                yield event
            error = {"code": "server_error", "message": value}
            yield b.event("error", code="server_error", message=value, param=None)
            yield b.event("response.failed", response=b.response("failed", error=error))
            return
        else:
            reason, count, prompt_tokens, cached = value
            cut = reason == "length"
            for event in b.close("incomplete" if cut else "completed"):
                yield event
            done = {"usage": usage(prompt_tokens, count, cached), "completed_at": int(time.time())}
            if cut:
                yield b.event("response.incomplete", response=b.response(
                    "incomplete", incomplete_details={"reason": "max_output_tokens"}, **done))
            else:
                yield b.event("response.completed", response=b.response("completed", **done))


async def sse(server: Server, job: Any, req: ChatRequest, b: Builder) -> AsyncIterator[bytes]:
    async for event in events(server, job, req, b):
        yield (f"event: {event['type']}\ndata: ".encode() + json.dumps(event, ensure_ascii=False).encode() + b"\n\n")
    yield b"data: [DONE]\n\n"
