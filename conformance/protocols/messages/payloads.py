"""Messages API payloads: each SSE event is named (``event: <type>``) and its ``data:`` is one JSON object whose
``type`` is the same name.

Invariant: any SSE event yields an ``Event``; never an exception. A payload that is not a JSON object with a string
``type`` is kept as ``kind="invalid"`` for the rules.

Sources: Anthropic API reference, "Streaming Messages" (the event flow: ``message_start``; per content block
``content_block_start``, deltas, ``content_block_stop``; one or more ``message_delta``; ``message_stop``; ``ping``
events anywhere; an ``error`` event; "new event types may be added", so an unknown type is handled gracefully) and
"Errors" (the error shapes and types). Unlike the OpenAI protocols there is no ``data: [DONE]``.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from conformance.wire.json import data_value, loads_strict
from conformance.wire.sse import SSEEvent

MESSAGE_START = "message_start"
MESSAGE_DELTA = "message_delta"
MESSAGE_STOP = "message_stop"
BLOCK_START = "content_block_start"
BLOCK_DELTA = "content_block_delta"
BLOCK_STOP = "content_block_stop"
PING = "ping"
ERROR = "error"
KNOWN = frozenset({MESSAGE_START, MESSAGE_DELTA, MESSAGE_STOP, BLOCK_START, BLOCK_DELTA, BLOCK_STOP, PING, ERROR})
# the events Anthropic's SDKs hand to the caller by their event: name (anthropic-sdk-python _streaming.py,
# @anthropic-ai/sdk core/streaming.ts): an event without the name is dropped by both, unread
SDK_NAMED = frozenset({MESSAGE_START, MESSAGE_DELTA, MESSAGE_STOP, BLOCK_START, BLOCK_DELTA, BLOCK_STOP})

# Streaming Messages, "Content block delta types": the delta types each block type takes
DELTAS: dict[str, frozenset[str]] = {
    "text": frozenset({"text_delta", "citations_delta"}),
    "tool_use": frozenset({"input_json_delta"}),
    "server_tool_use": frozenset({"input_json_delta"}),
    "thinking": frozenset({"thinking_delta", "signature_delta"}),
}
DELTA_FIELD = {"text_delta": "text", "input_json_delta": "partial_json", "thinking_delta": "thinking",
               "signature_delta": "signature", "citations_delta": "citation"}
# Messages API reference, "stop_reason"
STOP_REASONS = frozenset({"end_turn", "max_tokens", "stop_sequence", "tool_use", "pause_turn", "refusal",
                          "model_context_window_exceeded"})
# Errors, "HTTP errors": the status of each error type (a type's status is the one it is sent with)
ERROR_STATUS: dict[str, tuple[int, ...]] = {
    "invalid_request_error": (400,), "authentication_error": (401,), "billing_error": (402,),
    "permission_error": (403,), "not_found_error": (404,), "request_too_large": (413,), "rate_limit_error": (429,),
    "timeout_error": (504,), "api_error": (500,), "overloaded_error": (529,),
}
OUTPUT_EVENTS = frozenset({BLOCK_START, BLOCK_DELTA, BLOCK_STOP, MESSAGE_DELTA, MESSAGE_STOP, ERROR})


class Event(NamedTuple):
    """One classified payload (a NamedTuple, like ``SSEEvent``, for speed)."""

    index: int  # type: ignore[assignment]  # the field shadows tuple.index on purpose
    offset: int
    kind: str  # event | invalid
    type: str  # the payload's type ("" when it has none)
    value: Any
    sse_type: str = "message"  # the SSE event: field (message when absent)
    problem: str | None = None


def classify(event: SSEEvent) -> Event:
    try:
        value = loads_strict(event.data)
    except ValueError as exc:
        return Event(event.index, event.offset, "invalid", "", event.data, event.type, str(exc)[:200])
    if not isinstance(value, dict) or not isinstance(value.get("type"), str):
        return Event(event.index, event.offset, "invalid", "", value, event.type)
    return Event(event.index, event.offset, "event", value["type"], value, event.type)


def answers(data: str) -> bool:
    """Whether an event's data shows the generation under way or over: a content block, the message's end, an error.
    message_start and ping do not: servers send them before the prompt is processed."""
    value = data_value(data)
    kind = value.get("type") if isinstance(value, dict) else None
    return not isinstance(kind, str) or kind in OUTPUT_EVENTS
