"""The Messages API's faults for the self-test: defects of the kinds servers' trackers show on /v1/messages (each
with the rules that must catch it), and legal variations that must pass."""

from __future__ import annotations

import json
from typing import Any

from reference_server.faults import Fault, State, on_type

MESSAGES = ("/v1/messages",)
F = Fault


def _raw(event: dict[str, Any], name: str | None) -> bytes:
    head = f"event: {name}\n".encode() if name is not None else b""
    return head + b"data: " + json.dumps(event, ensure_ascii=False).encode() + b"\n\n"


def _shift(event: Any, state: State) -> list[Any]:
    """Every content block index one too high: the first block is 1 (indices that skip)."""
    if isinstance(event, dict) and isinstance(event.get("index"), int):
        return [{**event, "index": event["index"] + 1}]
    return [event]


def _drop_last_json(event: Any, state: State) -> list[Any]:
    """The last input_json_delta of each tool_use block dropped: the pieces no longer join into its input."""
    delta = event.get("delta") if isinstance(event, dict) else None
    if isinstance(delta, dict) and delta.get("type") == "input_json_delta":
        held = state.setdefault("held_json", {})
        before = held.pop(event["index"], None)
        held[event["index"]] = event
        return [before] if before is not None else []
    if isinstance(event, dict) and event.get("type") == "content_block_stop":
        state.setdefault("held_json", {}).pop(event.get("index"), None)
    return [event]


def _stop_reason(value: str) -> Any:
    def apply(event: Any, state: State) -> list[Any]:
        return [{**event, "delta": {**event["delta"], "stop_reason": value}}]
    return apply


def _openai_error(value: Any, state: State) -> Any:
    """An error answered in OpenAI's envelope ({"error": {...}}) on the Messages route."""
    if state["status"] >= 400 and isinstance(value, dict) and isinstance(value.get("error"), dict):
        error = value["error"]
        return {"error": {"message": error.get("message"), "type": error.get("type"), "param": None, "code": None}}
    return value


def _no_start_usage(event: Any, state: State) -> list[Any]:
    message = {k: v for k, v in event["message"].items() if k != "usage"}
    return [{**event, "message": message}]


def _text_as_json_delta(event: Any, state: State) -> list[Any]:
    delta = event.get("delta") if isinstance(event, dict) else None
    if isinstance(delta, dict) and delta.get("type") == "text_delta":
        return [{**event, "delta": {"type": "input_json_delta", "partial_json": delta["text"]}}]
    return [event]


def _no_delta_usage(event: Any, state: State) -> list[Any]:
    return [{k: v for k, v in event.items() if k != "usage"}]


def _markup(event: Any, state: State) -> list[Any]:
    """The first text delta of the answer carries the call as <tool_call> markup."""
    delta = event.get("delta")
    if isinstance(delta, dict) and delta.get("type") == "text_delta" and not state.get("marked"):
        state["marked"] = True
        return [{**event, "delta": {**delta, "text": "<tool_call>" + delta.get("text", "")}}]
    return [event]


def _no_stop_sequence(value: Any, state: State) -> Any:
    """vLLM's AnthropicMessagesResponse: the stop_sequence key left out of a message."""
    if isinstance(value, dict) and value.get("type") == "message":
        return {k: v for k, v in value.items() if k != "stop_sequence"}
    return value


def _prefilled(state: State) -> bool:
    history = state["request"].get("messages") if isinstance(state.get("request"), dict) else None
    return isinstance(history, list) and bool(history) and isinstance(history[-1], dict) and \
        history[-1].get("role") == "assistant"


def _prefill_body(value: Any, state: State) -> Any:
    if _prefilled(state):
        return {"type": "error", "error": {"type": "invalid_request_error",
                                           "message": "the last message must have role user"}}
    return value


def _thinking_alone(event: Any, state: State) -> list[Any]:
    """With thinking, the text blocks after the thinking block dropped: end_turn after thinking alone."""
    kind = event.get("type")
    if kind == "content_block_start":
        block = event.get("content_block") or {}
        if block.get("type") == "thinking":
            state["thinking"] = True
        elif block.get("type") == "text" and state.get("thinking"):
            state.setdefault("dropped", set()).add(event.get("index"))
    if kind in ("content_block_start", "content_block_delta", "content_block_stop") and \
            event.get("index") in state.get("dropped", set()):
        return []
    return [event]


def _stop_as_end_turn(event: Any, state: State) -> list[Any]:
    delta = event.get("delta") or {}
    if delta.get("stop_reason") == "stop_sequence":
        return [{**event, "delta": {**delta, "stop_reason": "end_turn", "stop_sequence": None}}]
    return [event]


class ServerCut(Exception):
    """Raised mid-stream: the ASGI server drops the connection, the chunked body without its last chunk."""


def _cut(event: Any, state: State) -> list[Any]:
    state["deltas"] = state.get("deltas", 0) + 1
    if state["deltas"] == 2:
        raise ServerCut("the connection dropped mid-answer")
    return [event]


DEFECTS: list[Fault] = [
    F("messages-extra-keys", ("MSG-037",), "a key beyond the reference in the message object (issue 59)",
      paths=MESSAGES, body=lambda v, s: {**v, "kv_transfer_params": None} if isinstance(v, dict)
      and v.get("type") == "message" else v),
    F("messages-tool-markup", ("MSG-033",), "a tool call as <tool_call> markup in a text block (issue 59: vLLM with "
      "tool_choice none)", paths=MESSAGES, event=on_type("content_block_delta", _markup)),
    F("messages-no-stop-sequence-key", ("MSG-014",), "a message without the stop_sequence key (issue 59: vLLM)",
      paths=MESSAGES, body=_no_stop_sequence),
    F("messages-prefill-refused", ("MSG-034",), "a final assistant turn refused (issue 59: a server that requires "
      "the last turn to be the user's)", paths=MESSAGES, request=lambda b: b,
      status=lambda code, s: 400 if _prefilled(s) and code == 200 else code, body=_prefill_body),
    F("messages-thinking-alone", ("MSG-035",), "thinking, then end_turn with no text block (issue 59)",
      paths=MESSAGES, event=on_type(("content_block_start", "content_block_delta", "content_block_stop"),
                                    _thinking_alone)),
    F("messages-stop-as-end-turn", ("MSG-036",), "a stop sequence reported as end_turn, stop_sequence null (issue "
      "59: the two fields agree)", paths=MESSAGES, event=on_type("message_delta", _stop_as_end_turn)),
    F("messages-cut-mid-answer", ("TRN-021",), "the connection dropped mid-answer (issue 59: a stream the server "
      "cuts)", paths=MESSAGES, event=on_type("content_block_delta", _cut)),
    F("messages-indices-skip", ("MSG-007",), "content-block indices that skip (issue 45; vLLM and llama.cpp "
      "trackers)", paths=MESSAGES, event=on_type(("content_block_start", "content_block_delta", "content_block_stop"),
                                                 _shift)),
    F("messages-partial-json-short", ("MSG-010",), "a tool_use block whose partial_json pieces do not join into its "
      "input (issue 45)", paths=MESSAGES, event=on_type(("content_block_delta", "content_block_stop"),
                                                        _drop_last_json)),
    F("messages-stop-reason-stop", ("MSG-011",), "stop_reason \"stop\" instead of end_turn (issue 45)",
      paths=MESSAGES, event=on_type("message_delta", _stop_reason("stop"))),
    F("messages-no-message-stop", ("MSG-002",), "no message_stop (issue 45)", paths=MESSAGES,
      event=on_type("message_stop", lambda e, s: [])),
    F("messages-openai-errors", ("MSG-021",), "an error sent as an OpenAI envelope (issue 45; H24)", paths=MESSAGES,
      body=_openai_error),
    F("messages-misnamed-events", ("MSG-004",), "event: lines that disagree with the payload's type (issue 45)",
      paths=MESSAGES, event=lambda e, s: [_raw(e, "delta" if str(e.get("type", "")).endswith("delta") else
                                                e.get("type"))]),
    F("messages-unnamed-events", ("MSG-005",), "no event: lines (Anthropic's SDKs drop every event)", paths=MESSAGES,
      event=lambda e, s: [_raw(e, None)]),
    F("messages-usage-at-end-only", ("MSG-006",), "usage only at the end: message_start without usage (issue 45)",
      paths=MESSAGES, event=on_type("message_start", _no_start_usage)),
    F("messages-delta-type-wrong", ("MSG-008",), "text sent as input_json_delta in a text block", paths=MESSAGES,
      event=on_type("content_block_delta", _text_as_json_delta)),
    F("messages-block-never-stopped", ("MSG-009",), "content_block_stop never sent", paths=MESSAGES,
      event=on_type("content_block_stop", lambda e, s: [])),
    F("messages-delta-without-usage", ("MSG-011",), "message_delta without usage (@anthropic-ai/sdk's MessageStream "
      "reads event.usage.output_tokens)", paths=MESSAGES, event=on_type("message_delta", _no_delta_usage)),
]

LEGAL: list[Fault] = [
    F("messages-no-ping", (), "Streaming Messages: ping events are optional (any number)", legal=True, paths=MESSAGES,
      event=on_type("ping", lambda e, s: [])),
    F("messages-unknown-events", (), "Streaming Messages: new event types may be added; handle them gracefully",
      legal=True, paths=MESSAGES, event=on_type("ping", lambda e, s: [e, {"type": "conformance_future_event"}])),
]
