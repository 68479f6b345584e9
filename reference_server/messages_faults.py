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


DEFECTS: list[Fault] = [
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
