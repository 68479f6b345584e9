"""The recording server: what real agents send, kept as the corpus (``fixtures/agents/``).

A scripted server on 127.0.0.1 that speaks the four protocols just well enough for an agent to finish a turn: it
answers a request that offers a tool it knows how to call with a call of it, a request that carries that call's
result with a short text, and anything else with a short text. Every request is kept: its method, path, headers
(secrets replaced) and body, in the order the agent sent it.
"""

from __future__ import annotations

import itertools
import json
import re
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from conformance.wire.local import LocalServer

SCRUBBED = "<scrubbed>"
SECRET_HEADERS = ("authorization", "x-api-key", "cookie", "api-key", "openai-api-key", "proxy-authorization")
TEXT = "Done."
SIGNATURE = "Y29uZm9ybWFuY2UtcmVjb3JkZXItc2lnbmF0dXJl"  # an opaque token the agent sends back as it came
_IDS = itertools.count(1)


def _next_id() -> str:
    """The ids of what the server makes (messages, calls, items): numbered, so a recording is the same each time."""
    return f"{next(_IDS):024d}"


KEY_LIKE = re.compile(r"(sk-[A-Za-z0-9_\-]{8,}|Bearer\s+\S+)")


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: Any
    at: float


@dataclass
class Script:
    """What the server calls, per protocol: the tool name it looks for and the input it gives it."""

    calls: dict[str, dict[str, Any]] = field(default_factory=dict)  # tool name -> its input (arguments)


def scrub_headers(headers: Any, secret: str) -> dict[str, str]:
    out = {}
    for name, value in headers.items():
        lower = name.lower()
        if lower in SECRET_HEADERS or (secret and secret in value):
            out[lower] = SCRUBBED
        else:
            out[lower] = KEY_LIKE.sub(SCRUBBED, value)
    return out


def has_result(body: dict[str, Any]) -> bool:
    """Whether the history already carries a tool's result (the agent ran the call)."""
    for msg in body.get("messages") or []:
        if not isinstance(msg, dict):
            continue
        if msg.get("role") == "tool":
            return True
        content = msg.get("content")
        if isinstance(content, list) and any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content):
            return True
    return any(isinstance(i, dict) and i.get("type") in ("function_call_output", "custom_tool_call_output")
               for i in body.get("input") or [] if isinstance(body.get("input"), list))


def _tool_names(body: dict[str, Any]) -> list[str]:
    names = []
    for tool in body.get("tools") or []:
        if not isinstance(tool, dict):
            continue
        inner = tool.get("function")
        fn: dict[str, Any] = inner if isinstance(inner, dict) else tool
        if isinstance(fn.get("name"), str):
            names.append(fn["name"])
    return names


def choose_call(body: dict[str, Any], script: Script) -> tuple[str, dict[str, Any]] | None:
    if has_result(body):
        return None
    for name in _tool_names(body):
        if name in script.calls:
            return name, script.calls[name]
    return None


def _sse(events: list[tuple[str | None, dict[str, Any]]]) -> bytes:
    out = b""
    for name, payload in events:
        out += (f"event: {name}\n" if name else "").encode() + b"data: " + json.dumps(payload).encode() + b"\n\n"
    return out


def _thinks(body: dict[str, Any]) -> bool:
    thinking = body.get("thinking")
    return isinstance(thinking, dict) and thinking.get("type") in ("enabled", "adaptive")


def messages_answer(body: dict[str, Any], script: Script) -> tuple[str, bytes]:
    """A Messages answer: a thinking block first when the request turns thinking on (so the agent sends it back in
    its next turn), then the call or the text."""
    call = choose_call(body, script)
    mid = "msg_" + _next_id()
    model = body.get("model", "m")
    usage = {"input_tokens": 10, "output_tokens": 0}
    blocks: list[dict[str, Any]] = []
    if _thinks(body) and call:
        blocks.append({"type": "thinking", "thinking": "The file is to be read.", "signature": SIGNATURE})
    if call:
        blocks.append({"type": "tool_use", "id": "toolu_" + _next_id(), "name": call[0], "input": call[1]})
        stop = "tool_use"
    else:
        blocks.append({"type": "text", "text": TEXT})
        stop = "end_turn"
    if not body.get("stream"):
        return "application/json", json.dumps({
            "id": mid, "type": "message", "role": "assistant", "model": model, "content": blocks,
            "stop_reason": stop, "stop_sequence": None, "usage": {**usage, "output_tokens": 3}}).encode()
    events: list[tuple[str | None, dict[str, Any]]] = [
        ("message_start", {"type": "message_start", "message": {
            "id": mid, "type": "message", "role": "assistant", "model": model, "content": [], "stop_reason": None,
            "stop_sequence": None, "usage": usage}}), ("ping", {"type": "ping"})]
    for index, block in enumerate(blocks):
        if block["type"] == "thinking":
            start: dict[str, Any] = {"type": "thinking", "thinking": "", "signature": ""}
            deltas = [{"type": "thinking_delta", "thinking": block["thinking"]},
                      {"type": "signature_delta", "signature": block["signature"]}]
        elif block["type"] == "tool_use":
            start = {**block, "input": {}}
            deltas = [{"type": "input_json_delta", "partial_json": json.dumps(block["input"])}]
        else:
            start, deltas = {"type": "text", "text": ""}, [{"type": "text_delta", "text": block["text"]}]
        events.append(("content_block_start", {"type": "content_block_start", "index": index,
                                               "content_block": start}))
        events += [("content_block_delta", {"type": "content_block_delta", "index": index, "delta": d})
                   for d in deltas]
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    events += [("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                                  "usage": {"output_tokens": 3}}),
               ("message_stop", {"type": "message_stop"})]
    return "text/event-stream", _sse(events)


def responses_answer(body: dict[str, Any], script: Script) -> tuple[str, bytes]:
    """A Responses answer: a reasoning item first (with encrypted_content when the request includes it, so the
    agent sends it back), then the call or the message."""
    call = choose_call(body, script)
    rid = "resp_" + _next_id()
    items: list[dict[str, Any]] = []
    if call and body.get("reasoning"):
        reasoning: dict[str, Any] = {"type": "reasoning", "id": "rs_" + _next_id(),
                                     "summary": [{"type": "summary_text", "text": "The file is to be read."}]}
        if "reasoning.encrypted_content" in (body.get("include") or []):
            reasoning["encrypted_content"] = SIGNATURE
        items.append(reasoning)
    if call:
        items.append({"type": "function_call", "id": "fc_" + _next_id(), "status": "completed",
                      "call_id": "call_" + _next_id(), "name": call[0], "arguments": json.dumps(call[1])})
    else:
        items.append({"type": "message", "id": "msg_" + _next_id(), "status": "completed",
                      "role": "assistant", "content": [{"type": "output_text", "text": TEXT, "annotations": []}]})
    usage = {"input_tokens": 10, "output_tokens": 3, "total_tokens": 13,
             "input_tokens_details": {"cached_tokens": 0}, "output_tokens_details": {"reasoning_tokens": 0}}
    base = {"id": rid, "object": "response", "created_at": int(time.time()), "model": body.get("model", "m"),
            "output": [], "status": "in_progress", "usage": None, "tools": body.get("tools") or [],
            "tool_choice": body.get("tool_choice", "auto"), "parallel_tool_calls": body.get("parallel_tool_calls", True)}
    done = {**base, "status": "completed", "output": items, "usage": usage}
    if not body.get("stream"):
        return "application/json", json.dumps(done).encode()
    events: list[tuple[str | None, dict[str, Any]]] = [
        ("response.created", {"type": "response.created", "response": base})]
    for index, item in enumerate(items):
        added = {**item, "status": "in_progress"}
        if item["type"] == "function_call":
            added["arguments"] = ""
        if item["type"] == "message":
            added["content"] = []
        events.append(("response.output_item.added", {"type": "response.output_item.added", "output_index": index,
                                                      "item": added}))
        if item["type"] == "function_call":
            events += [("response.function_call_arguments.delta", {
                "type": "response.function_call_arguments.delta", "item_id": item["id"], "output_index": index,
                "delta": item["arguments"]}),
                ("response.function_call_arguments.done", {
                    "type": "response.function_call_arguments.done", "item_id": item["id"], "output_index": index,
                    "arguments": item["arguments"]})]
        if item["type"] == "message":
            part = {"type": "output_text", "text": "", "annotations": []}
            events.append(("response.content_part.added", {"type": "response.content_part.added",
                                                           "item_id": item["id"], "output_index": index,
                                                           "content_index": 0, "part": part}))
            events.append(("response.output_text.delta", {"type": "response.output_text.delta",
                                                          "item_id": item["id"], "output_index": index,
                                                          "content_index": 0, "delta": TEXT}))
            events += [("response.output_text.done", {"type": "response.output_text.done", "item_id": item["id"],
                                                      "output_index": index, "content_index": 0, "text": TEXT}),
                       ("response.content_part.done", {"type": "response.content_part.done", "item_id": item["id"],
                                                       "output_index": index, "content_index": 0,
                                                       "part": {**part, "text": TEXT}})]
        events.append(("response.output_item.done", {"type": "response.output_item.done", "output_index": index,
                                                     "item": item}))
    events.append(("response.completed", {"type": "response.completed", "response": done}))
    for number, (_, payload) in enumerate(events):
        payload["sequence_number"] = number
    return "text/event-stream", _sse(events)


def chat_answer(body: dict[str, Any], script: Script) -> tuple[str, bytes]:
    call = choose_call(body, script)
    cid, model, created = "chatcmpl-" + _next_id(), body.get("model", "m"), int(time.time())
    calls = [{"index": 0, "id": "call_" + _next_id(), "type": "function",
              "function": {"name": call[0], "arguments": json.dumps(call[1])}}] if call else None
    finish = "tool_calls" if call else "stop"
    usage = {"prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13}
    if not body.get("stream"):
        message: dict[str, Any] = {"role": "assistant", "content": None if call else TEXT}
        if calls:
            message["tool_calls"] = [{k: v for k, v in c.items() if k != "index"} for c in calls]
        return "application/json", json.dumps({
            "id": cid, "object": "chat.completion", "created": created, "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}], "usage": usage}).encode()
    head = {"id": cid, "object": "chat.completion.chunk", "created": created, "model": model}
    delta: dict[str, Any] = {"role": "assistant", **({"tool_calls": calls} if calls else {"content": TEXT})}
    chunks = [{**head, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
              {**head, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}]
    if (body.get("stream_options") or {}).get("include_usage"):
        chunks.append({**head, "choices": [], "usage": usage})
    return "text/event-stream", _sse([(None, c) for c in chunks]) + b"data: [DONE]\n\n"


def ollama_answer(body: dict[str, Any], script: Script) -> tuple[str, bytes]:
    call = choose_call(body, script)
    model, now = body.get("model", "m"), time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    message: dict[str, Any] = {"role": "assistant", "content": "" if call else TEXT}
    if call:
        message["tool_calls"] = [{"function": {"name": call[0], "arguments": call[1]}}]
    last = {"model": model, "created_at": now, "message": message if body.get("stream") is False else
            {"role": "assistant", "content": ""}, "done": True, "done_reason": "stop", "eval_count": 3,
            "prompt_eval_count": 10}
    if body.get("stream") is False:
        return "application/json", json.dumps(last).encode()
    first = {"model": model, "created_at": now, "message": message, "done": False}
    return "application/x-ndjson", (json.dumps(first) + "\n" + json.dumps(last) + "\n").encode()


class Recorder(LocalServer):
    """The server, started on a free port of 127.0.0.1; ``requests`` is what came, in order."""

    def __init__(self, script: Script, secret: str = "") -> None:
        global _IDS
        _IDS = itertools.count(1)  # each recording numbers its ids from 1
        self.script, self.secret = script, secret
        self.requests: list[Recorded] = []
        self._lock = threading.Lock()
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _reply(self, status: int, ctype: str, data: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                if ctype == "text/event-stream":
                    self.send_header("Cache-Control", "no-cache")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:  # noqa: N802
                recorder._keep(self, None)
                path = self.path.split("?", 1)[0]
                if path.endswith("/models"):
                    self._reply(200, "application/json", json.dumps({"object": "list", "data": [
                        {"id": "recording-model", "object": "model", "created": 0, "owned_by": "recorder",
                         "type": "model", "display_name": "recording-model"}]}).encode())
                elif path == "/api/tags":
                    self._reply(200, "application/json", b'{"models": []}')
                else:
                    self._reply(404, "application/json", b'{"error": {"message": "not found"}}')

            def do_HEAD(self) -> None:  # noqa: N802
                recorder._keep(self, None)
                self._reply(200, "text/plain", b"")

            def do_POST(self) -> None:  # noqa: N802
                size = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(size) if size else b""
                try:
                    body = json.loads(raw) if raw else {}
                except ValueError:
                    body = {"_raw": raw.decode("utf-8", "replace")[:2000]}
                recorder._keep(self, body)
                path = self.path.split("?", 1)[0]
                if not isinstance(body, dict):
                    body = {}
                if path.endswith("/messages/count_tokens"):
                    self._reply(200, "application/json", b'{"input_tokens": 10}')
                elif path.endswith("/messages"):
                    self._reply(200, *messages_answer(body, recorder.script))
                elif path.endswith("/responses"):
                    self._reply(200, *responses_answer(body, recorder.script))
                elif path.endswith("/chat/completions"):
                    self._reply(200, *chat_answer(body, recorder.script))
                elif path == "/api/chat":
                    self._reply(200, *ollama_answer(body, recorder.script))
                else:
                    self._reply(404, "application/json", b'{"error": {"message": "not found"}}')

        super().__init__(Handler)

    def _keep(self, handler: BaseHTTPRequestHandler, body: Any) -> None:
        with self._lock:
            self.requests.append(Recorded(handler.command, handler.path,
                                          scrub_headers(handler.headers, self.secret), body, time.time()))

    @property
    def base_url(self) -> str:
        return self.host_url
