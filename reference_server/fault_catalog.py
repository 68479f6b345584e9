"""The catalogue of defects and legal variations, each from a row of ../shared/docs/DEVIATIONS.md
or a seed document, each with the rules that must catch it."""

from __future__ import annotations

import json
from typing import Any

from reference_server.faults import (
    Chunk,
    Fault,
    State,
    _rand_id,
    _set,
    choice,
    delta,
    edit,
    is_finish,
    is_usage,
    sse_frame,
)

TRACEBACK = b"Internal Server Error\n"


def req(**changes: Any) -> Any:
    """A request fault that sets (or, with None, removes) top-level fields of a chat request."""
    def apply(body: Any) -> Any:
        if not isinstance(body, dict):
            return body
        out = dict(body)
        for key, value in changes.items():
            if callable(value):
                value = value(out)
            if value is None:
                out.pop(key, None)
            else:
                out[key] = value
        return out
    return apply


def headers_set(name: bytes, value: bytes | None) -> Any:
    def apply(headers: list[tuple[bytes, bytes]], state: State) -> list[tuple[bytes, bytes]]:
        kept = [(k, v) for k, v in headers if k != name]
        return kept + ([(name, value)] if value is not None else [])
    return apply


def on_sse(func: Any) -> Any:
    def apply(headers: list[tuple[bytes, bytes]], state: State) -> list[tuple[bytes, bytes]]:
        return func(headers, state) if state["kind"] == "sse" else headers
    return apply


def errors_only(func: Any) -> Any:
    def apply(value: Any, state: State) -> Any:
        return func(value, state) if state["status"] >= 400 and isinstance(value, dict) else value
    return apply


def content_map(func: Any) -> Any:
    def apply(chunk: Chunk, state: State) -> None:
        d = delta(chunk)
        if isinstance(d.get("content"), str) and d["content"]:
            d["content"] = func(d["content"], state)
    return edit(apply)


def tool_map(func: Any) -> Any:
    def apply(chunk: Chunk, state: State) -> None:
        for piece in delta(chunk).get("tool_calls") or []:
            func(piece, state)
    return edit(apply)


def _strict_refusal(body: Any) -> tuple[int, dict[str, Any]] | None:
    """Seed 001's refusals: a 400 with code unsupported_value naming the field, for what it does not support."""
    if not isinstance(body, dict):
        return None
    choice, fmt = body.get("tool_choice"), body.get("response_format")
    if body.get("tools") and choice not in (None, "auto", "none"):
        field, value = "tool_choice", choice
    elif body.get("parallel_tool_calls") is False:
        field, value = "parallel_tool_calls", False
    elif isinstance(fmt, dict) and fmt.get("type") in ("json_object", "json_schema"):
        field, value = "response_format", fmt.get("type")
    else:
        return None
    return 400, {"message": f"{field} {json.dumps(value)} is not supported by this server",
                 "type": "invalid_request_error", "param": field, "code": "unsupported_value"}


def _string_error(value: Any, state: State) -> Any:
    """LM Studio's refusal shape: the error a plain string (seed 003 §2.4)."""
    error = value.get("error") if isinstance(value, dict) else None
    return {"error": error["message"]} if isinstance(error, dict) and isinstance(error.get("message"), str) else value


def _embedding_first(value: Any, state: State) -> Any:
    """An embedding model ahead of the chat model in /v1/models (seed 003 §6)."""
    if isinstance(value, dict) and isinstance(value.get("data"), list):
        embed = {"id": "text-embedding-nomic-embed-text-v1.5", "object": "model", "created": 0, "owned_by": "local"}
        return {**value, "data": [embed, *value["data"]]}
    return value


def _swallow(text: str, stop: Any) -> str:
    """The text with every stop sequence taken out (and the answer going on past it)."""
    for seq in [stop] if isinstance(stop, str) else stop if isinstance(stop, list) else []:
        if isinstance(seq, str) and seq:
            text = text.replace(seq, "")
    return text


def _usage_minus_one(chunk: Chunk, state: State) -> list[Any]:
    """One token short: a length finish whose usage says max_tokens - 1."""
    usage = chunk.get("usage") if isinstance(chunk, dict) else None
    if isinstance(usage, dict) and isinstance(usage.get("completion_tokens"), int) and state.get("length"):
        usage["completion_tokens"] -= 1
    if is_finish(chunk) and choice(chunk).get("finish_reason") == "length":
        state["length"] = True
    return [chunk]


def _no_usage(chunk: Chunk, state: State) -> list[Any]:
    return [] if is_usage(chunk) else [chunk]


def _usage_everywhere(chunk: Chunk, state: State) -> list[Any]:
    if not is_usage(chunk):
        chunk["usage"] = {"prompt_tokens": 1, "completion_tokens": state["events"],
                          "total_tokens": 1 + state["events"]}
    return [chunk]


def _usage_on_finish(chunk: Chunk, state: State) -> list[Any]:
    if is_finish(chunk):
        state["finish"] = chunk
        return []
    if is_usage(chunk) and "finish" in state:
        finish = state.pop("finish")
        finish["usage"] = chunk["usage"]
        return [finish]
    return [chunk]


def _finish_late(chunk: Chunk, state: State) -> list[Any]:
    """Hold the finish chunk until the usage chunk has gone (or until [DONE])."""
    if is_finish(chunk):
        state["finish"] = chunk
        return []
    if is_usage(chunk) and "finish" in state:
        return [chunk, state.pop("finish")]
    return [chunk]


def _done_after_held_finish(state: State) -> bytes:
    held = state.pop("finish", None)
    return (sse_frame(json.dumps(held).encode()) if held else b"") + sse_frame(b"[DONE]")


def _finish_twice(chunk: Chunk, state: State) -> list[Any]:
    if delta(chunk).get("content") and not state.get("done_once"):
        state["done_once"] = True
        choice(chunk)["finish_reason"] = "stop"
    return [chunk]


def _content_after_finish(chunk: Chunk, state: State) -> list[Any]:
    if is_finish(chunk):
        extra = json.loads(json.dumps(chunk))
        extra["choices"][0] = {"index": 0, "delta": {"content": " more"}, "finish_reason": None}
        return [chunk, extra]
    return [chunk]


def _cumulative(chunk: Chunk, state: State) -> list[Any]:
    d = delta(chunk)
    if isinstance(d.get("content"), str) and d["content"]:
        state["so_far"] = state.get("so_far", "") + d["content"]
        d["content"] = state["so_far"]
    return [chunk]


def _extra_choices_empty(chunk: Chunk, state: State) -> list[Any]:
    if state["events"] == 1:
        return [chunk, {**chunk, "choices": []}]
    return [chunk]


def _tool_to_content(chunk: Chunk, state: State) -> list[Any]:
    d = delta(chunk)
    for piece in d.pop("tool_calls", None) or []:
        fn = piece.get("function") or {}
        text = (f'<tool_call>{{"name": "{fn["name"]}", "arguments": ' if fn.get("name") else "") + fn.get("arguments", "")
        d["content"] = d.get("content", "") + text
    if is_finish(chunk) and choice(chunk)["finish_reason"] == "tool_calls":
        choice(chunk)["finish_reason"] = "stop"
        return [{**chunk, "choices": [{"index": 0, "delta": {"content": "}</tool_call>"}, "finish_reason": None}]},
                chunk]
    return [chunk]


def _drop_last_args(chunk: Chunk, state: State) -> list[Any]:
    """Each argument fragment is sent one chunk late, so the last one is never sent."""
    pieces = delta(chunk).get("tool_calls") or []
    if pieces and "id" not in pieces[0]:
        held, state["held_piece"] = state.get("held_piece"), chunk
        return [held] if held is not None else []
    return [chunk]


def _close_first(chunk: Chunk, state: State) -> list[Any]:
    d = delta(chunk)
    if isinstance(d.get("content"), str) and d["content"] and not state.get("closed"):
        state["closed"] = True
        d["content"] = "</think>" + d["content"]
    return [chunk]


def _reasoning_after(chunk: Chunk, state: State) -> list[Any]:
    d = delta(chunk)
    if d.get("reasoning_content"):
        state.setdefault("thoughts", []).append(chunk)
        return []
    if d.get("content") and state.get("thoughts"):
        return [chunk, *state.pop("thoughts")]
    return [chunk]


def _think_leak(chunk: Chunk, state: State) -> list[Any]:
    d = delta(chunk)
    if d.get("reasoning_content"):
        d["content"] = "<think>" + d["reasoning_content"] + "</think>"
    return [chunk]


def _tags_in_reasoning(chunk: Chunk, state: State) -> list[Any]:
    d = delta(chunk)
    if isinstance(d.get("reasoning_content"), str) and d["reasoning_content"] and not state.get("opened"):
        state["opened"] = True
        d["reasoning_content"] = "<think>" + d["reasoning_content"]
    return [chunk]


def _json_fence(chunk: Chunk, state: State) -> list[Any]:
    d = delta(chunk)
    if isinstance(d.get("content"), str) and d["content"] and not state.get("fenced"):
        state["fenced"] = True
        d["content"] = "```json\n" + d["content"]
    if is_finish(chunk) and state.get("fenced"):
        return [{**chunk, "choices": [{"index": 0, "delta": {"content": "\n```"}, "finish_reason": None}]}, chunk]
    return [chunk]


def _content_to_reasoning(chunk: Chunk, state: State) -> list[Any]:
    d = delta(chunk)
    if isinstance(d.get("content"), str) and d["content"]:
        d["reasoning_content"] = d.pop("content")
    return [chunk]


def _split_chunk(payload: bytes, state: State) -> bytes:
    """The second chunk's JSON cut in two, each half its own event."""
    if state["events"] != 2 or not payload.startswith(b"{"):
        return sse_frame(payload)
    half = len(payload) // 2
    return sse_frame(payload[:half]) + sse_frame(payload[half:])


def _mixed_frames(payload: bytes, state: State) -> bytes:
    sep = b"\r\n" if state["events"] <= 2 else b"\n"
    return b"data: " + payload + sep + sep


def _retry_first(payload: bytes, state: State) -> bytes:
    return (b"retry: 3s\n" if state["events"] == 1 else b"") + sse_frame(payload)


def _bad_utf8(payload: bytes, state: State) -> bytes:
    return sse_frame(payload.replace("é".encode(), b"\xc3"))


def _tool_pieces_merged(chunk: Chunk, state: State) -> list[Any]:
    pieces = delta(chunk).get("tool_calls") or []
    if pieces and "id" in pieces[0]:
        state["whole"] = chunk
        return []
    if pieces and "whole" in state:
        state["whole"]["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"] += \
            pieces[0]["function"].get("arguments", "")
        return []
    if is_finish(chunk) and "whole" in state:
        return [state.pop("whole"), chunk]
    return [chunk]


def _ollama_last(func: Any) -> Any:
    def apply(frame: Any, state: State) -> list[Any]:
        return func(frame) if isinstance(frame, dict) and frame.get("done") is True else [frame]
    return apply


def _malformed_accepted(body: Any) -> Any:
    if isinstance(body, dict) and isinstance(body.get("messages"), list):
        return body
    return {"model": "chat-conformance/bigram-ref", "messages": [{"role": "user", "content": "Hi"}], "stream": True}


def _mentions(value: Any, keys: tuple[str, ...]) -> bool:
    text = json.dumps(value) if value is not None else ""
    return any(f'"{k}"' in text for k in keys)


def _history_refusal(body: Any, key: str, message: str) -> tuple[int, dict[str, Any]] | None:
    """400 for a history whose assistant turn carries ``key`` (tool_calls or reasoning_content)."""
    messages = body.get("messages") if isinstance(body, dict) else None
    if isinstance(messages, list) and any(isinstance(m, dict) and m.get("role") == "assistant" and m.get(key)
                                          for m in messages):
        return 400, {"message": message, "type": "invalid_request_error", "param": "messages", "code": "invalid_type"}
    return None


def _prompt_bytes(body: Any) -> int:
    """How long the messages of a chat request are, as JSON."""
    return len(json.dumps(body.get("messages"))) if isinstance(body, dict) else 0


def _tool_positions(chunk: Chunk, state: State) -> None:
    """A call's index is the tool's position in the request's tools list, not its position among the calls (one call
    of the second tool gets index 1): the pieces after the first carry the index the first one got."""
    tools = (state.get("request") or {}).get("tools") or []
    names = [t.get("function", {}).get("name") for t in tools if isinstance(t, dict)]
    moved = state.setdefault("tool_position", {})
    for piece in delta(chunk).get("tool_calls") or []:
        name = (piece.get("function") or {}).get("name")
        if name in names:
            moved[piece.get("index")] = names.index(name)
        piece["index"] = moved.get(piece.get("index"), piece.get("index"))


def _drop_system_images(body: Any) -> Any:
    """The server a client talks to drops image parts outside user messages and answers (IMG-002)."""
    if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
        return body
    kept = []
    for m in body["messages"]:
        if isinstance(m, dict) and m.get("role") != "user" and isinstance(m.get("content"), list):
            parts = [p for p in m["content"] if not (isinstance(p, dict) and p.get("type") == "image_url")]
            if not parts:
                continue
            m = {**m, "content": parts}
        kept.append(m)
    return {**body, "messages": kept}


OLLAMA = ("/api/chat", "/api/generate")
RESPONSES = ("/v1/responses",)  # (its own faults: reference_server/responses_faults.py)
F = Fault

















DEFECTS: list[Fault] = [
    # framing
    F("no-done", ("SSE-002",), "A1 A2 A4", done=lambda s: b""),
    F("events-after-done", ("SSE-003",), "seed 000", done=lambda s: sse_frame(b"[DONE]") + sse_frame(b'{"choices":[]}')),
    F("bytes-after-done", ("SSE-004",), "seed 000", done=lambda s: sse_frame(b"[DONE]") + b": bye\n\n"),
    F("one-newline-between-events", ("SSE-006", "SSE-002"), "A12", frame=lambda p, s: b"data: " + p + b"\n",
      done=lambda s: b"data: [DONE]\n\n"),
    F("done-without-blank-line", ("SSE-005", "SSE-002"), "A8", done=lambda s: b"data: [DONE]\n"),
    F("bare-done", ("SSE-007", "SSE-002"), "A6", done=lambda s: b"[DONE]\n\n"),
    F("named-events", ("SSE-008",), "A5", frame=lambda p, s: b"event: chunk\n" + sse_frame(p)),
    F("chunk-split-across-events", ("SSE-006",), "A9 A12", frame=_split_chunk),
    F("invalid-utf8", ("SSE-001",), "B8", frame=_bad_utf8),
    F("comment-as-data", ("SSE-006",), "A20", done=lambda s: sse_frame(b": OPENROUTER PROCESSING") + sse_frame(b"[DONE]")),
    F("bad-retry", ("SSE-015",), "WHATWG", frame=_retry_first),
    # transport
    F("json-content-type", ("TRN-001",), "A24", headers=on_sse(headers_set(b"content-type", b"application/json"))),
    F("no-cache-control", ("TRN-003",), "seed 000", headers=on_sse(headers_set(b"cache-control", None))),
    F("request-id-not-echoed", ("TRN-006", "TRN-013"), "seed 000", headers=headers_set(b"x-request-id", b"other")),
    F("buffered-to-end", ("TRN-007",), "F44", buffer=True),
    F("stream-without-asking", ("TRN-009", "TRN-002"), "A28", request=req(stream=lambda b: True)),
    F("latin1-charset", ("TRN-012",), "B rows",
      headers=on_sse(headers_set(b"content-type", b"text/event-stream; charset=iso-8859-1"))),
    # chunks
    F("object-plural", ("CHK-002",), "C1", chunk=_set(("object",), "chat.completions.chunk")),
    F("id-per-chunk", ("CHK-003",), "C10 C11", chunk=_set(("id",), lambda c, s: _rand_id())),
    F("empty-id", ("CHK-003",), "C15", chunk=_set(("id",), "")),
    F("model-changes", ("CHK-004",), "C24", chunk=_set(("model",), lambda c, s: f"model-{s['events']}")),
    F("created-drifts", ("CHK-005",), "C14 C20", chunk=_set(("created",), lambda c, s: c["created"] + s["events"])),
    F("created-ms", ("CHK-006",), "C18 C19", chunk=_set(("created",), lambda c, s: c["created"] * 1000)),
    F("choice-index-missing", ("CHK-007",), "C34", chunk=edit(lambda c, s: choice(c).pop("index", None))),
    F("n-ignored", ("CHK-007",), "I4", request=req(n=None)),
    F("delta-null-on-finish", ("CHK-008",), "C9", chunk=_set(("choice", "delta"), None, is_finish)),
    F("role-every-delta", ("CHK-009",), "C25 C26", chunk=edit(lambda c, s: delta(c).update(role="assistant")
                                                                if c.get("choices") else None)),
    F("role-empty", ("CHK-009",), "C29", chunk=edit(lambda c, s: delta(c).update(role="") if "role" in delta(c)
                                                       else None)),
    F("no-role", ("CHK-010",), "C30 C31", chunk=edit(lambda c, s: delta(c).pop("role", None))),
    F("content-object", ("CHK-011",), "F38", chunk=content_map(lambda t, s: {"text": t})),
    F("cumulative-deltas", ("CHK-012",), "A38", chunk=_cumulative),
    F("replacement-char", ("CHK-013",), "B1 B2", chunk=content_map(lambda t, s: t.replace("é", "\ufffd"))),
    F("empty-choices-chunk", ("CHK-014",), "C19", chunk=_extra_choices_empty),
    F("refusal-with-content", ("CHK-018",), "seed 003 §3.2", chunk=edit(
        lambda c, s: delta(c).update(refusal="No.") if delta(c).get("content") else None)),
    F("non-stream-no-role", ("CHK-019",), "C36", body=lambda v, s: (v["choices"][0]["message"].pop("role", None), v)[1]
      if isinstance(v, dict) and v.get("choices") else v),
    # finish
    F("finish-twice", ("FIN-001",), "D16", chunk=_finish_twice),
    F("finish-never", ("FIN-001",), "D5 D6", chunk=_set(("choice", "finish_reason"), None, is_finish)),
    F("finish-eos", ("FIN-002",), "D11 D12", chunk=_set(("choice", "finish_reason"), "eos_token", is_finish)),
    F("finish-empty-string", ("FIN-002", "FIN-001"), "D1 D2", chunk=_set(
        ("choice", "finish_reason"), "", lambda c: bool(c.get("choices")) and not is_finish(c))),
    F("content-after-finish", ("FIN-003",), "D26", chunk=_content_after_finish),
    F("finish-key-missing", ("FIN-005",), "D4", chunk=edit(
        lambda c, s: choice(c).pop("finish_reason", None) if c.get("choices") and not is_finish(c) else None)),
    F("max-tokens-ignored", ("FIN-006",), "I4",
      request=req(max_tokens=lambda b: b["max_tokens"] * 4 if isinstance(b.get("max_tokens"), int) else None)),
    F("length-reported-as-stop", ("FIN-007",), "D20 D22", chunk=_set(
        ("choice", "finish_reason"), "stop", lambda c: is_finish(c) and choice(c)["finish_reason"] == "length")),
    F("stop-ignored", ("FIN-008",), "I4 D25", request=req(stop=None)),
    # issue 15: a stop sequence removed from the text while generation goes on ("Hello,world!")
    F("stop-swallowed", ("FIN-011",), "issue 15 (a stop sequence swallowed)", request=req(stop=None),
      chunk=content_map(lambda t, s: _swallow(t, (s.get("request") or {}).get("stop")))),
    F("length-before-cap", ("FIN-010",), "issue 15 (max_tokens off by one)", chunk=_usage_minus_one),
    F("empty-answer", ("FIN-009",), "D6 F11", chunk=edit(lambda c, s: delta(c).pop("content", None)
                                                       if delta(c).get("content") else None)),
    # usage
    F("usage-unrequested", ("USG-001",), "E1 E2", request=req(stream_options={"include_usage": True})),
    F("usage-missing", ("USG-002", "USG-011"), "E12 E14", chunk=lambda c, s: [] if is_usage(c) else [c]),
    F("usage-before-finish", ("USG-003",), "seed 003 §3.4", chunk=_finish_late, done=_done_after_held_finish),
    F("usage-every-chunk", ("USG-004",), "E8 E9", chunk=_usage_everywhere),
    F("usage-on-finish-chunk", ("USG-005",), "E4 E5", chunk=_usage_on_finish),
    F("usage-choices-missing", ("USG-005",), "E18 E19", chunk=edit(lambda c, s: c.pop("choices") if is_usage(c)
                                                                  else None)),
    F("usage-wrong-total", ("USG-006",), "E10", chunk=edit(
        lambda c, s: c["usage"].update(total_tokens=c["usage"]["total_tokens"] + 2) if is_usage(c) else None)),
    F("usage-zero-completion", ("USG-010",), "E10", chunk=edit(
        lambda c, s: c["usage"].update(completion_tokens=0, total_tokens=c["usage"]["prompt_tokens"])
        if is_usage(c) else None)),
    F("non-stream-no-usage", ("USG-008",), "E14", body=lambda v, s: (v.pop("usage", None), v)[1]
      if isinstance(v, dict) and "choices" in v else v),
    # tools
    F("tool-index-missing", ("TOOL-001",), "F18 F19", chunk=tool_map(lambda p, s: p.pop("index", None))),
    F("tool-index-from-one", ("TOOL-002",), "F28", chunk=tool_map(lambda p, s: p.update(index=p.get("index", 0) + 1))),
    F("tool-index-is-tool-position", ("TOOL-002",), "issue 44 (a lone call's index is its tool's place in tools)",
      request=lambda b: b, chunk=edit(_tool_positions)),
    F("tool-id-missing", ("TOOL-003",), "F34 F36", chunk=tool_map(lambda p, s: p.pop("id", None))),
    F("tool-type-missing", ("TOOL-005",), "F31", chunk=tool_map(lambda p, s: p.pop("type", None))),
    F("tool-name-repeated", ("TOOL-006",), "F31 F33", chunk=tool_map(
        lambda p, s: p["function"].update(name=s.setdefault("name", p["function"].get("name")))
        if s.get("name") or p["function"].get("name") else None)),
    F("tool-arguments-object", ("TOOL-007",), "F38 F39", chunk=tool_map(
        lambda p, s: p["function"].update(arguments={"fragment": p["function"].get("arguments", "")}))),
    F("tool-arguments-cut", ("TOOL-008",), "F41", chunk=_drop_last_args),
    F("tool-call-in-content", ("TOOL-010",), "F12 F14", chunk=_tool_to_content),
    F("tool-finish-stop", ("TOOL-016",), "F1 F5 F6 F8", chunk=_set(
        ("choice", "finish_reason"), "stop", lambda c: is_finish(c) and choice(c)["finish_reason"] == "tool_calls")),
    F("tool-id-changes", ("TOOL-015",), "F26 F29", chunk=tool_map(
        lambda p, s: p.update(id="call_changed") if "id" not in p else None)),
    F("tool-choice-none-ignored", ("TOOL-011",), "seed 003 §2.4",
      request=req(tool_choice=lambda b: "auto" if b.get("tool_choice") == "none" else b.get("tool_choice"))),
    F("tool-choice-required-ignored", ("TOOL-012", "TOOL-018"), "seed 003 §2.4",
      request=req(tool_choice=lambda b: "none" if b.get("tool_choice") == "required" else b.get("tool_choice"))),
    F("tool-schema-ignored", ("TOOL-009", "TOOL-006"), "seed 003 §2.4", request=req(
        tools=lambda b: [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]
        if b.get("tools") else None,
        tool_choice=lambda b: "required" if b.get("tools") and b.get("tool_choice") != "none" else b.get("tool_choice"))),
    # reasoning
    F("think-markup-leaks", ("RSN-004",), "G9 G10", chunk=_think_leak),
    F("think-close-only", ("RSN-003",), "G2", chunk=_close_first),
    F("think-tags-in-reasoning", ("RSN-011",), "seed 003 §4 (the template's markup left in reasoning_content)",
      chunk=_tags_in_reasoning),
    F("reasoning-ignored", ("RSN-005", "RSN-008"), "seed 003 §2.1", request=req(reasoning_effort=None)),
    F("reasoning-despite-none", ("RSN-006",), "seed 003 §2.6",
      request=req(reasoning_effort=lambda b: "low" if b.get("reasoning_effort") == "none" else b.get("reasoning_effort"))),
    F("reasoning-after-answer", ("RSN-007",), "G12", chunk=_reasoning_after),
    # structured
    F("json-fenced", ("STR-002",), "seed 000 structured output", chunk=_json_fence),
    F("response-format-ignored", ("STR-001", "STR-003", "STR-006"), "seed 003 §2.6",
      request=req(response_format=None, messages=lambda b: [{"role": "user", "content": "Hi"}]
                  if b.get("response_format") else b.get("messages"))),
    F("json-in-reasoning", ("STR-005",), "seed 003 §2.6 (LM Studio #1773)", chunk=_content_to_reasoning),
    # errors
    F("error-flat", ("ERR-001",), "H9", body=errors_only(lambda v, s: {"object": "error", **v["error"]})),
    F("error-string", ("ERR-001",), "H25", body=errors_only(lambda v, s: {"error": v["error"]["message"]})),
    F("error-detail", ("ERR-001",), "H22", body=errors_only(lambda v, s: {"detail": v["error"]["message"]})),
    F("error-html", ("ERR-001", "ERR-004"), "A39 H20", body=errors_only(
        lambda v, s: (s.update({"content-type": b"text/html"}), b"<html><body>Bad Request</body></html>")[1])),
    F("error-empty-message", ("ERR-002",), "H10", body=errors_only(lambda v, s: {"error": {**v["error"], "message": ""}})),
    F("error-no-code", ("ERR-003",), "H8", body=errors_only(lambda v, s: {"error": {"message": v["error"]["message"]}})),
    F("error-text-plain", ("ERR-004",), "H21", headers=lambda h, s: headers_set(b"content-type", b"text/plain")(h, s)
      if s["status"] >= 400 else h),
    F("schema-empty-200", ("TRN-018",), "issue 27 (mlx-omni-server: strict json_schema answered 200 with 0 bytes)",
      respond=lambda raw: (200, b"") if b'"json_schema"' in raw else None),
    F("roundtrip-500", ("ERR-021", "TOOL-020"), "issue 15 (a 500 on a tool round trip)",
      respond=lambda raw: (500, TRACEBACK) if b'"tool_call_id"' in raw else None),
    F("json-as-text-accepted", ("ERR-022",), "issue 15 (a JSON body as text/plain parsed)",
      engine={"accept_text_plain": True}),
    F("error-code-is-status", ("ERR-023",), "issue 15 (LiteLLM's code \"400\")",
      body=errors_only(lambda v, s: {**v, "error": {**v["error"], "code": str(s["status"])}}
                       if isinstance(v.get("error"), dict) else v)),
    F("error-type-class-name", ("ERR-027",), "issue 59 (vLLM: the exception's class name, NotFoundError, as the type)",
      body=errors_only(lambda v, s: {**v, "error": {**v["error"], "type": "BadRequestError" if s["status"] == 400
                                                    else "NotFoundError"}} if isinstance(v.get("error"), dict) else v)),
    F("overflow-500", ("ERR-005", "ERR-011"), "issue 44 (a prompt beyond the context answered 500, not a 4xx envelope)",
      refuse=lambda b: (500, {"message": "RuntimeError: llama_decode returned -1", "type": "server_error", "param": None,
                              "code": None}) if _prompt_bytes(b) > 20_000 else None),
    F("error-500", ("ERR-005",), "H11 H12", status=lambda code, s: 500 if 400 <= code < 500 and code != 429 else code),
    F("bad-input-accepted", ("ERR-006", "ERR-007"), "I5 H2", request=_malformed_accepted),
    F("unknown-model-served", ("ERR-012",), "H15 seed 003 §2.1",
      request=req(model=lambda b: "chat-conformance/bigram-ref")),
    F("no-retry-after", ("ERR-014",), "seed 001", headers=lambda h, s: [(k, v) for k, v in h if k != b"retry-after"]),
    F("slow-refusal", ("ERR-017",), "H1; seed 001 start (limits before rendering and tokenization)",
      error_delay=11.0),  # past the self-test's refusal deadline, min(10 s, --timeout 20)
    # cancellation
    F("disconnect-ignored", ("CAN-001",), "J1 J2 J8", engine={"ignore_disconnect": True}),
    F("cancel-noop", ("CAN-003", "CAN-002"), "J9 J10", engine={"ignore_cancel": True}, paths=("/v1/",)),
    F("cancel-unknown-200", ("CAN-004", "CAN-006"), "seed 000", paths=("/v1/chat/completions/",),
      status=lambda code, s: 200 if code == 404 else code,
      body=lambda v, s: {"cancelled": True} if isinstance(v, dict) and v.get("cancelled") is False else v),
    # models
    F("models-bare-list", ("MOD-002",), "K1", paths=("/v1/models",), body=lambda v, s: v.get("data", v)
      if isinstance(v, dict) else v),
    F("models-duplicate", ("MOD-005",), "seed 003 §6", paths=("/v1/models",), body=lambda v, s: {
        **v, "data": v["data"] * 2} if isinstance(v, dict) and "data" in v else v),
    F("models-empty-body", ("MOD-001",), "K6", paths=("/v1/models",), body=lambda v, s: b""),
    F("models-empty-list", ("MOD-009",), "issue 15 (mlx-omni-server lists only its cache)", paths=("/v1/models",),
      body=lambda v, s: {**v, "data": []}),
    # ollama
    F("ollama-no-done", ("OLL-003",), "L4 L8", paths=OLLAMA,
      ndjson=_ollama_last(lambda f: [{k: v for k, v in f.items() if k != "done"}])),
    F("ollama-done-no-reason", ("OLL-004",), "L4", paths=OLLAMA,
      ndjson=_ollama_last(lambda f: [{k: v for k, v in f.items() if k != "done_reason"}])),
    F("ollama-after-done", ("OLL-005",), "seed 002", paths=OLLAMA, ndjson=_ollama_last(lambda f: [f, {**f, "done": False}])),
    F("ollama-text-plain", ("OLL-001",), "L1", paths=OLLAMA, headers=lambda h, s: headers_set(
        b"content-type", b"text/plain")(h, s) if s["kind"] == "ndjson" else h),
    F("ollama-partial-line", ("OLL-002",), "seed 002", paths=OLLAMA,
      ndjson=_ollama_last(lambda f: [json.dumps(f).encode()])),
    F("ollama-model-changes", ("OLL-008",), "seed 002", paths=OLLAMA, ndjson=_ollama_last(lambda f: [{**f, "model": "other"}])),
    F("ollama-length-as-stop", ("OLL-011",), "seed 002 §2 (length at the output limit)", paths=OLLAMA,
      ndjson=_ollama_last(lambda f: [{**f, "done_reason": "stop"}])),
    # the dialect facts of issue 12
    F("union-schema-crash", ("TOOL-019",), "seed 001 tool calls (schema converters that crash on unions)",
      refuse=lambda b: (500, {"message": "KeyError: 'type'", "type": "server_error", "param": None, "code": None})
      if _mentions(b.get("tools") if isinstance(b, dict) else None, ("anyOf", "allOf", "oneOf")) else None),
    F("roundtrip-refused", ("TOOL-020",), "seed 003 §2.2 (a null content beside tool_calls refused)",
      refuse=lambda b: _history_refusal(b, "tool_calls", "messages[1].content must be a string")),
    F("reasoning-roundtrip-refused", ("RSN-009",), "seed 003 §2.2 (reasoning sent back refused)",
      refuse=lambda b: _history_refusal(b, "reasoning_content", "Unknown field: reasoning_content")),
    F("effort-refused-500", ("RSN-010", "ERR-021"), "seed 003 §2.1 (xhigh refused as a server error, not a 4xx)",
      refuse=lambda b: (500, {"message": "KeyError: 'xhigh'", "type": "server_error", "param": None, "code": None})
      if isinstance(b, dict) and b.get("reasoning_effort") == "xhigh" else None),
    F("image-crash", ("IMG-001",), "seed 003 §2.2 (an image the server cannot decode)",
      refuse=lambda b: (500, {"message": "cannot identify image file", "type": "server_error", "param": None,
                              "code": None}) if _mentions(b.get("messages") if isinstance(b, dict) else None,
                                                          ("image_url",)) else None),
    F("image-role-ignored", ("IMG-002",), "seed 001 images (an image on another role silently dropped)",
      request=_drop_system_images),
    F("capabilities-string", ("MOD-007",), "seed 001 images (capabilities as a string)", paths=("/v1/models",),
      body=lambda v, s: {**v, "data": [{**m, "capabilities": "text"} for m in v["data"]]}
      if isinstance(v, dict) and isinstance(v.get("data"), list) else v),
    F("health-vision-bogus", ("MOD-008",), "seed 001 images (/health's vision state)", paths=("/health",),
      body=lambda v, s: {**v, "vision": "absent"} if isinstance(v, dict) else v),
    F("grammar-header-everywhere", ("TRN-016",), "seed 000 headers (X-Grammar-Constraints on every stream)",
      headers=lambda h, s: [*h, (b"x-grammar-constraints", b"downgraded")] if s["kind"] == "sse" else h),
    F("profile-event-unasked", ("CHK-020",), "seed 000 profiling events (sent without X-AFM-Profile)",
      done=lambda s: b'data: {"afm_profile": {"chip": "M3"}}\n\ndata: [DONE]\n\n', profile="afm"),
    F("no-openai-request-id", ("TRN-015",), "seed 000 headers (OpenAI-Request-ID missing), under profile afm",
      headers=lambda h, s: [(k, v) for k, v in h if k != b"openai-request-id"], profile="afm"),
    F("prompt-reuse-unreported", ("USG-012",), "seed 001 prompt reuse, under profile strict (a seed 001 server: its "
      "documented refusals too)",
      chunk=edit(lambda c, s: c["usage"].update(prompt_tokens_details={"cached_tokens": 0}) if is_usage(c) else None),
      refuse=_strict_refusal, lacks=("structured",), paths=("/v1/chat/completions",), profile="strict"),
]

LEGAL: list[Fault] = [
    F("unknown-parameter-accepted", (), "I1 I2 (accepting an unknown field is legal; ERR-013 is seed 001's, strict)",
      legal=True, request=lambda b: {k: v for k, v in b.items() if k in ("model", "messages", "stream", "max_tokens")}
      if isinstance(b, dict) and "temperatur" in b else b),
    F("oversized-as-400", (), "seed 003 §2.1 (400 for a request rejected; ERR-015's 413 is seed 001's, profile strict)",
      legal=True, status=lambda code, s: 400 if code == 413 else code),
    F("models-id-and-name", (), "seed 003 §6 (the documented list: id and name; MOD-004/MOD-006 advisory)", legal=True,
      paths=("/v1/models",), body=lambda v, s: {"data": [{"id": m["id"], "name": m["id"]} for m in v["data"]]}
      if isinstance(v, dict) and "data" in v else v),
    F("mixed-line-ends", (), "A21 (WHATWG: CRLF, LF or CR per line; SSE-016 advisory)", legal=True, frame=_mixed_frames),
    F("effort-refused-enveloped", (), "seed 003 §2.5 (a stricter server may reject with 400 or 422)", legal=True,
      refuse=lambda b: (422, {"message": "reasoning_effort must be low, medium or high", "type": "invalid_request_error",
                              "param": None, "code": None})
      if isinstance(b, dict) and b.get("reasoning_effort") == "xhigh" else None),
    F("data-without-space", (), "A9 (legal)", legal=True, frame=lambda p, s: b"data:" + p + b"\n\n"),
    F("crlf", (), "A21 A22", legal=True, frame=lambda p, s: b"data: " + p + b"\r\n\r\n",
      done=lambda s: b"data: [DONE]\r\n\r\n"),
    F("bare-cr", (), "A22", legal=True, frame=lambda p, s: b"data: " + p + b"\r\r", done=lambda s: b"data: [DONE]\r\r"),
    F("comments", (), "A14 A15", legal=True, frame=lambda p, s: b": keep-alive\n\n" + sse_frame(p)),
    F("bare-colon-keepalive", (), "A16", legal=True, frame=lambda p, s: b":\n\n" + sse_frame(p)),
    F("id-and-retry", (), "A18", legal=True, frame=lambda p, s: f"id: {s['events']}\nretry: 1000\n".encode()
      + sse_frame(p)),
    F("usage-null", (), "reference contract", legal=True,
      chunk=edit(lambda c, s: c.setdefault("usage", None) if not is_usage(c) else None)),
    F("extra-fields", (), "seed 003 §3.7", legal=True, chunk=edit(
        lambda c, s: c.update(system_fingerprint="fp_1", service_tier="default", obfuscation="x" * (s["events"] % 5)))),
    F("one-byte-per-write", (), "chunk boundaries anywhere", legal=True, split_bytes=True,
      paths=("/v1/chat/completions", "/v1/responses")),  # every SSE protocol: its bytes unchanged, split
    F("whole-tool-call", (), "F40", legal=True, chunk=_tool_pieces_merged),
    F("reasoning-key", (), "G4 G5", legal=True, chunk=edit(
        lambda c, s: delta(c).update(reasoning=delta(c).pop("reasoning_content"))
        if "reasoning_content" in delta(c) else None)),
    F("no-x-accel-buffering", (), "A30", legal=True, headers=lambda h, s: [(k, v) for k, v in h
                                                                          if k != b"x-accel-buffering"]),
    F("slow-prefill", (), "a model on a CPU: one slot, 0.5 s of prefill, 200 tokens/s", legal=True,
      engine={"pace": (1, 0.5, 200.0)}),
    F("strict-variants", (), "seed 001 supported API: tool_choice auto and none only, no parallel_tool_calls false, "
      "no structured output", legal=True, refuse=_strict_refusal, lacks=("structured",),
      paths=("/v1/chat/completions",)),
    F("no-usage", (), "seed 003 §3.4: a server without usage support sends no usage at all", legal=True,
      chunk=_no_usage, lacks=("usage",)),
    F("ollama-without-tags", (), "seed 002 §2: /api/chat, /api/generate and /api/pull, no /api/tags", legal=True,
      paths=("/api/tags",), status=lambda code, s: 404,
      body=lambda v, s: {"error": "not found"}),
    F("strict-dialect", (), "seed 001 under --profile strict: its documented refusals, and what it promises "
      "(invalid_tool_schema, image rules, /health, capabilities, prompt reuse) judged", legal=True,
      refuse=_strict_refusal, lacks=("structured",), paths=("/v1/chat/completions",), profile="strict"),
    F("lmstudio-errors", (), "seed 003 §2.4 under --profile lmstudio: refusals as {\"error\": \"<message>\"}",
      legal=True, body=_string_error, profile="lmstudio"),
    F("embedding-listed-first", (), "seed 003 §6: an embedding model listed before the chat model", legal=True,
      paths=("/v1/models",), body=_embedding_first),
]



def _parsed(raw: bytes) -> Any:
    try:
        return json.loads(raw)
    except (ValueError, RecursionError):
        return None


def _deep(raw: bytes) -> bool:
    from reference_server.app import MAX_NESTING, nesting

    value = _parsed(raw)
    return value is None and raw.count(b"[") + raw.count(b"{") > MAX_NESTING or (
        value is not None and nesting(value) > MAX_NESTING)


def _history_wrong(raw: bytes) -> bool:
    body = _parsed(raw)
    messages = body.get("messages") if isinstance(body, dict) else None
    return isinstance(messages, list) and any(
        isinstance(m, dict) and "tool_calls" in m and not (
            isinstance(m["tool_calls"], list) and all(isinstance(c, dict) and isinstance(c.get("function"), dict)
                                                      for c in m["tool_calls"])) for m in messages)


def _huge_int(raw: bytes) -> bool:
    body = _parsed(raw)
    return isinstance(body, dict) and any(isinstance(body.get(k), int) and not isinstance(body.get(k), bool)
                                          and body[k] >= 2**63 for k in ("seed", "top_k"))


# The classes the hardened reference server no longer has, put back one at a time for the fuzzer
# (`conformance fuzz` judges them, `conformance run` does not send them): tests/fuzz shows each is found.
FUZZ_FAULTS: list[Fault] = [
    F("deep-nesting-500", ("FUZ-003",), "issue: 100,000 nested arrays", respond=lambda raw: (500, TRACEBACK)
      if _deep(raw) else None),
    F("history-type-500", ("FUZ-003",), "issue: tool_calls 'x' in the history",
      respond=lambda raw: (500, TRACEBACK) if _history_wrong(raw) else None),
    F("huge-int-error-200", ("FUZ-001",), "issue: seed 2**64 answered 200 with an error body",
      respond=lambda raw: (200, b'{"error": {"message": "OverflowError"}}') if _huge_int(raw) else None),
]



def _protocol_faults() -> None:
    """Each protocol's own faults (reference_server/<name>_faults.py: DEFECTS and LEGAL), found by the registry."""
    from conformance.protocols import brought

    for module in brought("reference_server.{name}_faults"):
        DEFECTS.extend(module.DEFECTS)
        LEGAL.extend(module.LEGAL)


_protocol_faults()
BY_NAME: dict[str, Fault] = {f.name: f for f in DEFECTS + LEGAL + FUZZ_FAULTS}
