"""The Completions API's payloads: each SSE event's ``data:`` is one completion chunk (a JSON object) or the
terminator ``[DONE]``; an error may come as a JSON object with an ``error`` object.

Invariant: any SSE event yields a ``Chunk``; never an exception. A payload that is neither JSON nor ``[DONE]`` is kept
as ``kind="invalid"`` with its problem, for the rules.

Sources: OpenAI API reference, "Completions" (legacy): create completion (``prompt``, ``max_tokens``, ``stop``,
``n``, ``echo``, ``suffix``, ``logprobs``, ``stream``, ``stream_options.include_usage``), the completion object
(``id``, ``object: "text_completion"``, ``created``, ``model``, ``choices[]`` of ``text``, ``index``, ``logprobs``,
``finish_reason``; ``usage``); streamed, the same object per chunk, then ``data: [DONE]``.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from conformance.wire.json import data_value, loads_strict
from conformance.wire.sse import SSEEvent

DONE = "[DONE]"
OBJECT = "text_completion"
FINISH_REASONS = frozenset({"stop", "length", "content_filter"})
LOGPROB_KEYS = ("tokens", "token_logprobs", "top_logprobs", "text_offset")


class Chunk(NamedTuple):
    """One classified payload (a NamedTuple, like ``SSEEvent``, for speed)."""

    index: int  # type: ignore[assignment]  # the field shadows tuple.index on purpose
    offset: int
    kind: str  # chunk | done | error | invalid
    value: Any
    problem: str | None = None


def classify(event: SSEEvent) -> Chunk:
    data = event.data
    if data == DONE:
        return Chunk(event.index, event.offset, "done", data)
    try:
        value = loads_strict(data)
    except ValueError as exc:
        return Chunk(event.index, event.offset, "invalid", data, str(exc)[:200])
    if not isinstance(value, dict):
        return Chunk(event.index, event.offset, "invalid", value, "not a JSON object")
    if isinstance(value.get("error"), (dict, str)) and "choices" not in value:
        return Chunk(event.index, event.offset, "error", value)
    return Chunk(event.index, event.offset, "chunk", value)


def answers(data: str) -> bool:
    """Whether a payload shows the generation under way or over: a chunk with text or a finish, an error, [DONE]."""
    value = data_value(data)
    if not isinstance(value, dict):
        return True
    choices = value.get("choices")
    if not isinstance(choices, list):
        return True
    return any(isinstance(c, dict) and (c.get("text") or c.get("finish_reason")) for c in choices) or not choices
