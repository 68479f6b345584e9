"""Chunks: the envelope of every chat.completion.chunk (and of the non-stream body)."""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from typing import Any

from conformance.checks import Finding, check, finding, short
from conformance.checks.conditions import (
    chat_answer,
    chat_json,
    chat_sse,
    choice_items,
    deltas,
    once,
    requested_n,
)
from conformance.exchange import Analysis

KNOWN_CHUNK_KEYS = frozenset({
    "id", "object", "created", "model", "choices", "usage", "system_fingerprint", "service_tier",
    "obfuscation", "prompt_filter_results", "prompt_annotations",
})
TEXT_KEYS = ("content", "refusal", "reasoning_content", "reasoning")
MS_THRESHOLD = 100_000_000_000  # seconds since 1970 stay below this until the year 5138


def _envelopes(a: Analysis) -> list[tuple[int | None, Any]]:
    if a.format == "json":
        return [(None, a.json_body)]
    return once(a, "envelopes", lambda a: [(p.index, p.value) for p in a.chunks])


@check("CHK-001", when=(chat_sse,))
def chunk_objects(a: Analysis) -> Iterator[Finding]:
    for p in a.payloads:
        profile_event = p.kind == "profile" and not a.allows("profile-events")
        if profile_event or p.kind == "other" or (
            p.kind == "chunk" and not isinstance(p.value.get("choices"), list)
        ):
            yield finding(a, "CHK-001", f"a payload {short(p.value)}", "a JSON object with a choices array",
                          event=p.index)
            return


@check("CHK-021", when=(chat_answer,))
def envelope_keys(a: Analysis) -> Iterator[Finding]:
    """Seed 003 §3.2 documents a chunk of id, model and choices (its recorded example has no more): legal; OpenAI's
    schema has object and created too, so their absence is a note, and a wrong value is CHK-002's or CHK-005's."""
    for event, env in _envelopes(a):
        missing = [k for k in ("object", "created") if k not in env]
        if missing:
            yield finding(a, "CHK-021", f"no {' or '.join(missing)}", "object and created, as OpenAI sends them",
                          event=event)
            return


@check("CHK-002", when=(chat_answer,))
def object_literal(a: Analysis) -> Iterator[Finding]:
    want = "chat.completion.chunk" if a.format == "sse" else "chat.completion"
    for event, env in _envelopes(a):
        if "object" in env and env["object"] != want:
            yield finding(a, "CHK-002", f"object {env.get('object')!r}", repr(want), event=event)
            return


def _constant(a: Analysis, rule: str, key: str) -> Iterator[Finding]:
    first: Any = None
    for event, env in _envelopes(a):
        value = env.get(key)
        if not isinstance(value, str) or not value:
            yield finding(a, rule, f"{key} {short(value)}", "a non-empty string", event=event)
            return
        if first is None:
            first = value
        elif value != first:
            yield finding(a, rule, f"{key} {value!r} after {first!r}", f"the same {key} on every chunk",
                          event=event)
            return


@check("CHK-003", "CHK-004", when=(chat_sse,))
def constant_id_model(a: Analysis) -> Iterator[Finding]:
    yield from _constant(a, "CHK-003", "id")
    yield from _constant(a, "CHK-004", "model")


def _spans_a_second(a: Analysis) -> bool:
    """Whether the stream lasted long enough that a clock read per chunk must change (offline bytes: always judged).
    A short stream shows a drifting created only when it happens to cross a second boundary: not judged, so two runs
    of one server agree; the clock scenario's stream is sized to last over a second (issue 27)."""
    arrivals = a.exchange.arrivals
    return not arrivals or arrivals[-1][0] - arrivals[0][0] >= 1.0


def _a_clock_could(a: Analysis, change: int) -> bool:
    """Whether a clock read per chunk could make this change within the stream's arrival span: forward, by no more
    seconds than the span covers. A larger or backward change is no clock's, whatever the stream's length."""
    arrivals = a.exchange.arrivals
    span = arrivals[-1][0] - arrivals[0][0] if arrivals else 0.0
    return 0 <= change <= math.ceil(span)


@check("CHK-005", "CHK-006", when=(chat_answer,))
def created(a: Analysis) -> Iterator[Finding]:
    first: Any = None
    for event, env in _envelopes(a):
        if "created" not in env:  # CHK-021's note
            continue
        value = env["created"]
        if not isinstance(value, int) or isinstance(value, bool):
            yield finding(a, "CHK-005", f"created {short(value)}", "an integer", event=event)
            return
        if value >= MS_THRESHOLD:
            yield finding(a, "CHK-006", f"created {value}", "Unix seconds (this looks like milliseconds)",
                          event=event)
            return
        if first is None:
            first = value
        elif value != first and (_spans_a_second(a) or not _a_clock_could(a, value - first)):
            yield finding(a, "CHK-005", f"created {value} after {first}", "the same created on every chunk",
                          event=event)
            return


@check("CHK-007", when=(chat_answer,))
def choice_indices(a: Analysis) -> Iterator[Finding]:
    if a.format == "json":
        raw = a.json_body.get("choices")
        items: Sequence[tuple[int | None, dict[str, Any]]] = (
            [(None, c) for c in raw if isinstance(c, dict)] if isinstance(raw, list) else [])
    else:
        items = choice_items(a)
    seen: set[int] = set()
    for event, choice in items:
        index = choice.get("index")
        if not isinstance(index, int) or isinstance(index, bool):
            yield finding(a, "CHK-007", f"choice index {short(index)}", "an integer index", event=event)
            return
        seen.add(index)
    n = requested_n(a)
    if seen and seen != set(range(n)):
        yield finding(a, "CHK-007", f"choice indices {sorted(seen)}", f"indices {list(range(n))} for n={n}")


@check("CHK-008", "CHK-009", "CHK-010", when=(chat_sse,))
def deltas_and_roles(a: Analysis) -> Iterator[Finding]:
    annotation = next((p for p in a.payloads if p.kind == "annotation"), None)
    if annotation is not None and not a.allows("filter-chunks"):
        yield finding(a, "CHK-008", "an annotation choice without delta", "a delta object "
                      "(profile azure allows annotation chunks)", event=annotation.index)
    for event, choice in choice_items(a):
        if not isinstance(choice.get("delta"), dict):
            yield finding(a, "CHK-008", f"delta {short(choice.get('delta'))}", "a delta object", event=event)
            break
    first_seen: set[int] = set()
    roles: dict[int, int] = {}
    reported = set()
    for event, index, delta in deltas(a):
        is_first = index not in first_seen
        first_seen.add(index)
        if "role" in delta and delta["role"] is not None:
            roles[index] = roles.get(index, 0) + 1
            bad = delta["role"] != "assistant" or roles[index] > 1 or not is_first
            if bad and "CHK-009" not in reported:
                reported.add("CHK-009")
                yield finding(a, "CHK-009", f"role {delta['role']!r} on delta {roles[index]} of choice {index}",
                              "role: assistant once, on the first delta", event=event)
        elif is_first and "CHK-010" not in reported and not a.allows("role-optional"):
            reported.add("CHK-010")
            yield finding(a, "CHK-010", f"a first delta without role: {short(delta)}",
                          "role: assistant on the first delta", event=event)


@check("CHK-011", when=(chat_answer,))
def text_types(a: Analysis) -> Iterator[Finding]:
    if a.format == "json":
        raw = a.json_body.get("choices")
        items: list[tuple[int | None, Any]] = (
            [(None, c.get("message")) for c in raw if isinstance(c, dict)] if isinstance(raw, list) else [])
    else:
        items = [(e, d) for e, _, d in deltas(a)]
    for event, obj in items:
        for key in TEXT_KEYS:
            value = obj.get(key) if isinstance(obj, dict) else None
            if value is not None and not isinstance(value, str):
                yield finding(a, "CHK-011", f"{key} {short(value)}", "a string or null", event=event)
                return


@check("CHK-012", when=(chat_sse,))
def true_deltas(a: Analysis) -> Iterator[Finding]:
    so_far: dict[int, str] = {}
    previous: dict[int, str] = {}
    for event, index, delta in deltas(a):
        text = delta.get("content")
        if not isinstance(text, str) or not text:
            continue
        before, last = so_far.get(index, ""), previous.get(index, "")
        repeats_all = len(before) >= 16 and text.startswith(before)
        grows_last = len(last) >= 8 and len(text) > len(last) and text.startswith(last)
        if repeats_all or grows_last:
            yield finding(a, "CHK-012", f"a delta that repeats the {len(before if repeats_all else last)} "
                          "characters before it", "only the new text in each delta", event=event)
            return
        so_far[index], previous[index] = before + text, text


@check("CHK-013", when=(chat_answer,))
def no_replacement_chars(a: Analysis) -> Iterator[Finding]:
    if "\ufffd" in str(a.request.get("messages", "")):
        return
    for choice in a.assembled.choices.values():
        for name, text in (("content", choice.content), ("reasoning", choice.reasoning)):
            if "\ufffd" in text:
                at = text.index("\ufffd")
                yield finding(a, "CHK-013", f"U+FFFD in {name} near {text[max(0, at - 20):at + 5]!r}",
                              "whole characters (hold back a split multi-byte sequence)")
                return


@check("CHK-014", "CHK-015", "CHK-016", when=(chat_sse,))
def chunk_shapes(a: Analysis) -> Iterator[Finding]:
    reported: set[str] = set()
    for p in a.payloads:
        if p.kind == "prompt_filter" and not a.allows("filter-chunks") and "CHK-014" not in reported:
            reported.add("CHK-014")
            yield finding(a, "CHK-014", "a prompt-filter chunk with no choices",
                          "an empty choices array only on the usage chunk (profile azure allows it)",
                          event=p.index)
    for p in a.chunks:
        chunk = p.value
        choices = chunk.get("choices")
        if choices == [] and chunk.get("usage") is None and "CHK-014" not in reported:
            reported.add("CHK-014")
            yield finding(a, "CHK-014", "choices: [] on a chunk without usage",
                          "an empty choices array only on the usage chunk", event=p.index)
        unknown = sorted(set(chunk) - KNOWN_CHUNK_KEYS)
        if unknown and "CHK-015" not in reported:
            reported.add("CHK-015")
            yield finding(a, "CHK-015", f"top-level keys {unknown}", "the keys of chat.completion.chunk",
                          event=p.index)
        if isinstance(choices, list) and choices and "CHK-016" not in reported and all(
            isinstance(c, dict) and c.get("finish_reason") is None
            and not any(v not in (None, "", [], {}) for v in (c.get("delta") or {}).values())
            for c in choices
        ):
            reported.add("CHK-016")
            yield finding(a, "CHK-016", "a chunk whose deltas are empty and that finishes nothing",
                          "every chunk carries something", event=p.index)


@check("CHK-017", when=(chat_answer, lambda a: isinstance(a.request.get("model"), str)))
def requested_model(a: Analysis) -> Iterator[Finding]:
    if a.allows("model-version"):
        return
    envelopes = _envelopes(a)
    model = envelopes[0][1].get("model") if envelopes else None
    if envelopes and model != a.request["model"]:
        yield finding(a, "CHK-017", f"model {short(model)}", f"the requested model {a.request['model']!r}",
                      event=envelopes[0][0])


@check("CHK-018", when=(chat_answer,))
def refusal_alone(a: Analysis) -> Iterator[Finding]:
    for choice in a.assembled.choices.values():
        if choice.refusal and choice.content:
            yield finding(a, "CHK-018", f"refusal {short(choice.refusal)} and content {short(choice.content)}",
                          "content null when refusing")


@check("CHK-019", when=(chat_json,))
def message_role(a: Analysis) -> Iterator[Finding]:
    raw = a.json_body.get("choices")
    for choice in raw if isinstance(raw, list) else ():
        message = choice.get("message") if isinstance(choice, dict) else None
        if not isinstance(message, dict) or message.get("role") != "assistant":
            yield finding(a, "CHK-019", f"message {short(message)}", "a message with role assistant")
            return
