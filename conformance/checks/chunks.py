"""Chunks: the envelope of every chat.completion.chunk (and of the non-stream body)."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

from conformance.checks.conditions import (
    chat_answer,
    chat_json,
    chat_sse,
    requested_n,
)
from conformance.checks.registry import Finding, check, finding, short
from conformance.exchange import Analysis
from conformance.protocols.chat.watch import TEXT_KEYS, Constant, Created


@check("CHK-001", when=(chat_sse,))
def chunk_objects(a: Analysis) -> Iterator[Finding]:
    w = a.watch
    found = [p for p in (w.other, None if a.allows("profile-events") else w.profile) if p is not None]
    if found:
        p = min(found, key=lambda p: p.index)
        yield finding(a, "CHK-001", f"a payload {short(p.value)}", "a JSON object with a choices array", event=p.index)


@check("CHK-021", when=(chat_answer,))
def envelope_keys(a: Analysis) -> Iterator[Finding]:
    """Seed 003 §3.2 documents a chunk of id, model and choices (its recorded example has no more): legal; OpenAI's
    schema has object and created too, so their absence is a note, and a wrong value is CHK-002's or CHK-005's."""
    if a.format == "json":
        missing = [k for k in ("object", "created") if k not in a.json_body]
        found = (None, missing) if missing else None
    else:
        found = a.watch.missing_keys
    if found is not None:
        yield finding(a, "CHK-021", f"no {' or '.join(found[1])}", "object and created, as OpenAI sends them",
                      event=found[0])


@check("CHK-002", when=(chat_answer,))
def object_literal(a: Analysis) -> Iterator[Finding]:
    if a.format == "json":
        body = a.json_body
        found = (None, body["object"]) if "object" in body and body["object"] != "chat.completion" else None
        want = "chat.completion"
    else:
        found, want = a.watch.bad_object, "chat.completion.chunk"
    if found is not None:
        yield finding(a, "CHK-002", f"object {found[1]!r}", repr(want), event=found[0])


def _constant(a: Analysis, rule: str, key: str, watch: Constant) -> Iterator[Finding]:
    if watch.bad is not None:
        yield finding(a, rule, f"{key} {short(watch.bad[1])}", "a non-empty string", event=watch.bad[0])
    elif watch.changed is not None:
        yield finding(a, rule, f"{key} {watch.changed[1]!r} after {watch.first!r}", f"the same {key} on every chunk",
                      event=watch.changed[0])


@check("CHK-003", "CHK-004", when=(chat_sse,))
def constant_id_model(a: Analysis) -> Iterator[Finding]:
    yield from _constant(a, "CHK-003", "id", a.watch.ids)
    yield from _constant(a, "CHK-004", "model", a.watch.models)


def _spans_a_second(a: Analysis) -> bool:
    """Whether the stream lasted long enough that a clock read per chunk must change (offline bytes: always judged).
    A short stream shows a drifting created only when it happens to cross a second boundary: not judged, so two runs
    of one server agree; the clock scenario's stream is sized to last over a second (issue 27)."""
    arrivals = a.exchange.arrivals
    return not arrivals or arrivals[-1][0] - arrivals[0][0] >= 1.0


def _clock_change(a: Analysis, watch: Created) -> tuple[int, Any] | None:
    """The first change of created a clock read per chunk could not make within the stream's arrival span (any
    change on a stream that spans a second; else one backward, or by more seconds than the span covers)."""
    if _spans_a_second(a):
        return watch.changed
    arrivals = a.exchange.arrivals
    span = arrivals[-1][0] - arrivals[0][0]
    return watch.jumped if math.ceil(span) >= 1 else watch.changed


@check("CHK-005", "CHK-006", when=(chat_answer,))
def created(a: Analysis) -> Iterator[Finding]:
    if a.format == "json":
        watch = Created()
        if "created" in a.json_body:  # absent: CHK-021's note
            watch.see(0, a.json_body["created"])
    else:
        watch = a.watch.created
    change = _clock_change(a, watch)
    stop = watch.stop
    event = (lambda e: None) if a.format == "json" else (lambda e: e)
    if stop is not None and (change is None or stop[0] < change[0]):
        if stop[1] == "type":
            yield finding(a, "CHK-005", f"created {short(stop[2])}", "an integer", event=event(stop[0]))
        else:
            yield finding(a, "CHK-006", f"created {stop[2]}", "Unix seconds (this looks like milliseconds)",
                          event=event(stop[0]))
    elif change is not None:
        yield finding(a, "CHK-005", f"created {change[1]} after {watch.first}", "the same created on every chunk",
                      event=event(change[0]))


@check("CHK-007", when=(chat_answer,))
def choice_indices(a: Analysis) -> Iterator[Finding]:
    if a.format == "json":
        raw = a.json_body.get("choices")
        items = [c for c in raw if isinstance(c, dict)] if isinstance(raw, list) else []
        bad = next(((None, c.get("index")) for c in items if not isinstance(c.get("index"), int)
                    or isinstance(c.get("index"), bool)), None)
        seen = set() if bad is not None else {c["index"] for c in items}
    else:
        bad, seen = a.watch.bad_index, a.watch.indices
    if bad is not None:
        yield finding(a, "CHK-007", f"choice index {short(bad[1])}", "an integer index", event=bad[0])
        return
    n = requested_n(a)
    if seen and seen != set(range(n)):
        yield finding(a, "CHK-007", f"choice indices {sorted(seen)}", f"indices {list(range(n))} for n={n}")


@check("CHK-008", "CHK-009", "CHK-010", when=(chat_sse,))
def deltas_and_roles(a: Analysis) -> Iterator[Finding]:
    w = a.watch
    if w.annotation is not None and not a.allows("filter-chunks"):
        yield finding(a, "CHK-008", "an annotation choice without delta", "a delta object "
                      "(profile azure allows annotation chunks)", event=w.annotation.index)
    if w.bad_delta is not None:
        yield finding(a, "CHK-008", f"delta {short(w.bad_delta[1])}", "a delta object", event=w.bad_delta[0])
    problem, none = w.role_problem, w.no_role
    if problem is not None and (none is None or a.allows("role-optional") or problem[0] <= none[0]):
        event, role, count, index = problem
        yield finding(a, "CHK-009", f"role {role!r} on delta {count} of choice {index}",
                      "role: assistant once, on the first delta", event=event)
        problem = None
    if none is not None and not a.allows("role-optional"):
        yield finding(a, "CHK-010", f"a first delta without role: {short(none[1])}",
                      "role: assistant on the first delta", event=none[0])
    if problem is not None:
        event, role, count, index = problem
        yield finding(a, "CHK-009", f"role {role!r} on delta {count} of choice {index}",
                      "role: assistant once, on the first delta", event=event)


@check("CHK-011", when=(chat_answer,))
def text_types(a: Analysis) -> Iterator[Finding]:
    if a.format == "sse":
        bad = a.watch.bad_text
        if bad is not None:
            yield finding(a, "CHK-011", f"{bad[1]} {short(bad[2])}", "a string or null", event=bad[0])
        return
    raw = a.json_body.get("choices")
    for choice in raw if isinstance(raw, list) else ():
        obj = choice.get("message") if isinstance(choice, dict) else None
        for key in TEXT_KEYS:
            value = obj.get(key) if isinstance(obj, dict) else None
            if value is not None and not isinstance(value, str):
                yield finding(a, "CHK-011", f"{key} {short(value)}", "a string or null")
                return


@check("CHK-012", when=(chat_sse,))
def true_deltas(a: Analysis) -> Iterator[Finding]:
    repeated = a.watch.repeated
    if repeated is not None:
        yield finding(a, "CHK-012", f"a delta that repeats the {repeated[1]} characters before it",
                      "only the new text in each delta", event=repeated[0])


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
    w = a.watch
    if w.prompt_filter is not None and not a.allows("filter-chunks"):
        yield finding(a, "CHK-014", "a prompt-filter chunk with no choices",
                      "an empty choices array only on the usage chunk (profile azure allows it)", event=w.prompt_filter)
    elif w.empty_choices is not None:
        yield finding(a, "CHK-014", "choices: [] on a chunk without usage",
                      "an empty choices array only on the usage chunk", event=w.empty_choices)
    if w.unknown_keys is not None:
        yield finding(a, "CHK-015", f"top-level keys {w.unknown_keys[1]}", "the keys of chat.completion.chunk",
                      event=w.unknown_keys[0])
    if w.empty_chunk is not None:
        yield finding(a, "CHK-016", "a chunk whose deltas are empty and that finishes nothing",
                      "every chunk carries something", event=w.empty_chunk)


@check("CHK-017", when=(chat_answer, lambda a: isinstance(a.request.get("model"), str)))
def requested_model(a: Analysis) -> Iterator[Finding]:
    if a.allows("model-version"):
        return
    first = (None, a.json_body.get("model")) if a.format == "json" else a.watch.envelope_first
    if first is not None and first[1] != a.request["model"]:
        yield finding(a, "CHK-017", f"model {short(first[1])}", f"the requested model {a.request['model']!r}",
                      event=first[0])


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
