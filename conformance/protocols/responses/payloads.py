"""Responses API payloads: each SSE ``data:`` payload is one semantic event named by its ``type``.

Invariant: any SSE event yields an ``Event``; never an exception. A payload that is not a JSON
object with a string ``type`` is kept as ``kind="invalid"`` for the rules.

Sources: OpenAI API reference, "Responses streaming events" (every event carries ``type`` and
``sequence_number``; the stream ends with ``response.completed``, ``response.incomplete`` or
``response.failed``, with no ``[DONE]``); the Open Responses specification (the same events, sent as
``event: <type>`` plus ``data:``, and a ``data: [DONE]`` after the terminal event).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from conformance.wire.json import data_value, loads_strict
from conformance.wire.sse import SSEEvent

DONE = "[DONE]"
CREATED = "response.created"
QUEUED = "response.queued"
IN_PROGRESS = "response.in_progress"
COMPLETED = "response.completed"
INCOMPLETE = "response.incomplete"
FAILED = "response.failed"
TERMINAL = frozenset({COMPLETED, INCOMPLETE, FAILED})
TERMINAL_STATUS = {COMPLETED: "completed", INCOMPLETE: "incomplete", FAILED: "failed"}
ERROR = "error"
ITEM_ADDED = "response.output_item.added"
ITEM_DONE = "response.output_item.done"
PART_ADDED = "response.content_part.added"
PART_DONE = "response.content_part.done"
TEXT_DELTA = "response.output_text.delta"
TEXT_DONE = "response.output_text.done"
REFUSAL_DELTA = "response.refusal.delta"
REFUSAL_DONE = "response.refusal.done"
ARGS_DELTA = "response.function_call_arguments.delta"
ARGS_DONE = "response.function_call_arguments.done"
REASONING_DELTA = "response.reasoning_text.delta"
REASONING_DONE = "response.reasoning_text.done"
SUMMARY_DELTA = "response.reasoning_summary_text.delta"
SUMMARY_DONE = "response.reasoning_summary_text.done"
SUMMARY_PART_ADDED = "response.reasoning_summary_part.added"
SUMMARY_PART_DONE = "response.reasoning_summary_part.done"
ANNOTATION = "response.output_text.annotation.added"

# The events this suite knows the meaning of (OpenAI's reference lists more, for hosted tools: they are
# accepted, carried by their item, and never fail a rule for their type alone).
KNOWN = frozenset({
    CREATED, QUEUED, IN_PROGRESS, COMPLETED, INCOMPLETE, FAILED, ERROR, ITEM_ADDED, ITEM_DONE, PART_ADDED,
    PART_DONE, TEXT_DELTA, TEXT_DONE, REFUSAL_DELTA, REFUSAL_DONE, ARGS_DELTA, ARGS_DONE, REASONING_DELTA,
    REASONING_DONE, SUMMARY_DELTA, SUMMARY_DONE, SUMMARY_PART_ADDED, SUMMARY_PART_DONE, ANNOTATION,
})
OUTPUT_EVENTS = frozenset({TEXT_DELTA, REFUSAL_DELTA, ARGS_DELTA, REASONING_DELTA, SUMMARY_DELTA, ITEM_ADDED})


class Event(NamedTuple):
    """One classified payload (a NamedTuple, like ``SSEEvent``, for speed)."""

    index: int  # type: ignore[assignment]  # the field shadows tuple.index on purpose
    offset: int
    kind: str  # event | done | invalid
    type: str  # the payload's type ("" when it has none)
    value: Any
    sse_type: str = "message"  # the SSE event: field (message when absent)
    problem: str | None = None


def classify(event: SSEEvent) -> Event:
    if event.data == DONE:
        return Event(event.index, event.offset, "done", "", None, event.type)
    try:
        value = loads_strict(event.data)
    except ValueError as exc:
        return Event(event.index, event.offset, "invalid", "", event.data, event.type, str(exc)[:200])
    if not isinstance(value, dict) or not isinstance(value.get("type"), str):
        return Event(event.index, event.offset, "invalid", "", value, event.type)  # JSON (SSE-006 passes), no type
    return Event(event.index, event.offset, "event", value["type"], value, event.type)


def answers(data: str) -> bool:
    """Whether an event's data shows the generation under way or over: output, an item, an error, the end.
    response.created and response.in_progress do not: servers send them before the prompt is processed."""
    value = data_value(data)
    kind = value.get("type") if isinstance(value, dict) else None
    return not isinstance(kind, str) or kind in OUTPUT_EVENTS or kind in TERMINAL or kind == ERROR
