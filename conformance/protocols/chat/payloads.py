"""Chat Completions payloads: each SSE ``data:`` payload classified on its top-level keys.

Invariant: any SSE event yields a ``Payload``; never an exception. Malformed input is kept as a
``kind="invalid"`` payload for the rules.

Theory of operation. A payload is classified before any chunk decoding, as ../shared/seeds/000
asks ("Consumers should dispatch on top-level keys before applying an OpenAI chunk decoder"):
``[DONE]`` (the transport terminator of this protocol; the SSE layer knows nothing of it); an
error (``event: error`` or an ``error`` key, ../shared/seeds/003 §3.5); an AFM profile event; an
Azure prompt-filter chunk or an annotation chunk (003 §3.7); else a chunk.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from conformance.model import THINK_CLOSE as THINK_CLOSE
from conformance.model import THINK_OPEN as THINK_OPEN
from conformance.wire.json import fast_loads as fast_loads
from conformance.wire.json import loads_strict as loads_strict
from conformance.wire.sse import SSEEvent

DONE = "[DONE]"
PROFILE_KEYS = ("afm_profile", "afm_profile_extended")
FILTER_KEYS = ("prompt_filter_results", "prompt_annotations")


class Payload(NamedTuple):
    """One classified ``data:`` payload (a NamedTuple, like ``SSEEvent``, for speed)."""

    index: int  # type: ignore[assignment]  # the field shadows tuple.index on purpose
    offset: int
    kind: str  # done | invalid | error | profile | prompt_filter | annotation | chunk | other
    value: Any
    event_type: str = "message"
    problem: str | None = None


_REFUSED: dict[str, str] = {}  # short payloads JSON refused, and why: a flood of one (empty events) parsed once
_REFUSED_SHORT, _REFUSED_KEPT = 64, 256


def classify(event: SSEEvent) -> Payload:
    """Parse one event's data and name its kind from the top-level keys."""
    data = event.data
    if data == DONE:
        return Payload(event.index, event.offset, "done", None, event.type)
    problem = _REFUSED.get(data) if len(data) <= _REFUSED_SHORT else None
    if problem is None:
        try:
            value = loads_strict(data)
        except ValueError as exc:
            problem = str(exc)[:200]
            if len(data) <= _REFUSED_SHORT and len(_REFUSED) < _REFUSED_KEPT:
                _REFUSED[data] = problem
    if problem is not None:
        kind = "error" if event.type == "error" else "invalid"
        return Payload(event.index, event.offset, kind, data, event.type, problem)
    return Payload(event.index, event.offset, _kind_of(value, event.type), value, event.type)


def _kind_of(value: Any, event_type: str) -> str:
    if event_type == "error":
        return "error"
    if not isinstance(value, dict):
        return "other"
    choices = value.get("choices")
    if choices and type(choices) is list and type(choices[0]) is dict and "delta" in choices[0] \
            and "error" not in value:
        return "chunk"  # the common case, decided without scanning every key
    if value.get("error") is not None or "error" in value and "choices" not in value:
        return "error"  # also an error-marked chunk that carries choices (seed 000: mid-stream failure)
    if any(key in value for key in PROFILE_KEYS) and "choices" not in value:
        return "profile"
    if any(key in value for key in FILTER_KEYS) and not choices:
        return "prompt_filter"
    if isinstance(choices, list) and choices and all(_is_annotation(c) for c in choices):
        return "annotation"
    return "chunk"


def _is_annotation(choice: Any) -> bool:
    return (
        isinstance(choice, dict)
        and "delta" not in choice
        and ("content_filter_offsets" in choice or "content_filter_results" in choice)
    )


def error_object(payload: Payload) -> dict[str, Any]:
    """The error a payload reports, as an object with at least ``message``."""
    value = payload.value
    if isinstance(value, dict):
        inner = value.get("error", value)
        if isinstance(inner, dict):
            return inner
        return {"message": str(inner)}
    return {"message": str(value)}


OUTPUT_FIELDS = ("content", "reasoning_content", "reasoning", "tool_calls", "refusal")


def carries_output(value: Any) -> bool:
    """Whether a chunk carries generated output (text, reasoning, a tool call, a refusal), not only a role."""
    choices = value.get("choices") if isinstance(value, dict) else None
    if not isinstance(choices, list):
        return False
    return any(isinstance(c, dict) and isinstance(c.get("delta"), dict) and any(c["delta"].get(k) for k in OUTPUT_FIELDS)
               for c in choices)


def answers(data: str) -> bool:
    """Whether an event's data shows the generation under way or over: output, an error, a finish, [DONE].
    A role-only first chunk does not: servers send it before the prompt is even processed."""
    if data == DONE:
        return True
    try:
        value = loads_strict(data)
    except ValueError:
        return True  # not JSON: the checks judge it; the wait is over
    if not isinstance(value, dict) or "error" in value or carries_output(value):
        return True
    choices = value.get("choices")
    return isinstance(choices, list) and any(isinstance(c, dict) and c.get("finish_reason") for c in choices)
