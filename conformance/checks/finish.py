"""Finish: one finish_reason per choice, from the enum, last, and true to what happened."""

from __future__ import annotations

from collections.abc import Iterator

from conformance.checks.conditions import (
    chat_answer,
    chat_sse,
    complete,
    max_tokens,
    no_stream_error,
    usage_of,
)
from conformance.checks.registry import Finding, check, finding, short
from conformance.exchange import Analysis
from conformance.model import BAD_INPUT, Intent
from conformance.protocols.chat.payloads import carries_output
from conformance.protocols.chat.watch import FINISH_REASONS


def _finishes(a: Analysis) -> list[tuple[int | None, int, object]]:
    """(event, choice index, finish_reason) for every non-null finish_reason of a non-stream body."""
    raw = a.json_body.get("choices")
    return [(None, c.get("index", i), c.get("finish_reason")) for i, c in
            enumerate(raw if isinstance(raw, list) else []) if isinstance(c, dict)
            and c.get("finish_reason") is not None]


def _stream_finishes(a: Analysis, index: int) -> tuple[int, list[int]]:
    """How many finish_reasons a stream gave one choice, and the events of the first two (annotations' included
    where Azure's asynchronous filter ends a blocked stream in one, 003 §3.7)."""
    w = a.watch
    track = w.choices.get(index)
    count, events = (track.finish_count, list(track.finishes)) if track is not None else (0, [])
    if a.allows("filter-chunks"):
        extra = w.annotation_finishes.get(index, [])
        count += len(extra)
        events = sorted(events + [e for e, _ in extra])[:2]
    return count, events


@check("FIN-001", "FIN-002", when=(chat_answer, no_stream_error))
def one_finish(a: Analysis) -> Iterator[Finding]:
    cut = not complete(a)
    allowed = set(FINISH_REASONS)
    if a.allows("finish-cancelled") or a.intent == Intent.CANCELLED_STREAM:
        allowed.add("cancelled")
    if a.format == "json":
        finishes = _finishes(a)
        for index in sorted(a.assembled.choices) or [0]:
            mine = [(e, r) for e, i, r in finishes if i == index]
            if len(mine) > 1 or (not mine and not cut):
                yield finding(a, "FIN-001", f"{len(mine)} non-null finish_reason(s) for choice {index}",
                              "exactly one", event=mine[1][0] if len(mine) > 1 else None)
        bad = next(((e, r) for e, _, r in finishes if r not in allowed), None)
    else:
        for index in sorted(a.assembled.choices) or [0]:
            count, events = _stream_finishes(a, index)
            if count > 1 or (not count and not cut):
                yield finding(a, "FIN-001", f"{count} non-null finish_reason(s) for choice {index}",
                              "exactly one", event=events[1] if count > 1 else None)
        w = a.watch
        bad = w.bad_finish if "cancelled" not in allowed else w.bad_finish_but_cancelled
        if a.allows("filter-chunks"):  # an annotation's finish is a finish too
            extra = w.annotation_bad if "cancelled" not in allowed else w.annotation_bad_but_cancelled
            bad = min([f for f in (bad, extra) if f is not None], key=lambda f: f[0], default=None)
    if bad is not None:
        yield finding(a, "FIN-002", f"finish_reason {short(bad[1])}", f"one of {sorted(allowed)}", event=bad[0])


@check("FIN-003", "FIN-004", "FIN-005", when=(chat_sse,))
def finish_placement(a: Analysis) -> Iterator[Finding]:
    w = a.watch
    after_finish = w.after_finish
    if after_finish is not None:
        yield finding(a, "FIN-003", f"choice {after_finish.choice} continues after its finish "
                      f"({after_finish.event})", "nothing for a choice after its finish_reason",
                      event=after_finish.event_index)
    found = []
    if w.no_finish_key is not None:
        event, choice = w.no_finish_key
        found.append((event, 0, "FIN-005", f"a choice without the finish_reason key: {short(choice)}",
                      "finish_reason: null until the last chunk"))
    if w.finish_with_delta is not None:
        event, carries = w.finish_with_delta
        found.append((event, 1, "FIN-004", f"a finish chunk that carries {carries}", "an empty delta on the finish chunk"))
    for event, _, rule, received, expected in sorted(found, key=lambda f: (f[0], f[1])):
        yield finding(a, rule, received, expected, event=event)


@check("FIN-006", when=(chat_answer, lambda a: max_tokens(a) is not None and usage_of(a) is not None))
def cap_honored(a: Analysis) -> Iterator[Finding]:
    cap = max_tokens(a)
    used = (usage_of(a) or {}).get("completion_tokens")
    if isinstance(used, int) and cap is not None and used > cap:
        yield finding(a, "FIN-006", f"completion_tokens {used}", f"at most max_tokens {cap}")


@check("FIN-007", when=(chat_answer, no_stream_error, lambda a: a.intent == Intent.EXPECT_LENGTH))
def length_finish(a: Analysis) -> Iterator[Finding]:
    cap = max_tokens(a)
    used = (usage_of(a) or {}).get("completion_tokens")
    uncapped = a.exchange.observations.uncapped
    choices = list(a.assembled.choices.values())
    if uncapped is not None and choices and all(uncapped.startswith(c.content) for c in choices):
        # the same request with a larger cap (temperature 0) shows whether this answer was cut, whatever the usage
        # says (an off-by-one count stays under the cap: issue 27); an answer that differs leaves it to the counts
        for choice in choices:
            if len(uncapped) > len(choice.content) and choice.finish_reason != "length":
                yield finding(a, "FIN-007", f"finish_reason {choice.finish_reason!r} for {short(choice.content, 40)}, "
                              f"the answer with a larger cap cut short ({short(uncapped, 60)})", "length")
        return
    pieces = a.watch.output_chunks if a.format == "sse" else sum(1 for p in a.chunks if carries_output(p.value))
    if cap is not None and (used < cap if isinstance(used, int) else pieces < cap):
        return  # the answer ended by itself before the cap (its usage, else its chunk count, says so)
    if cap is not None and isinstance(used, int) and used > cap:
        return  # the cap was ignored, not reached: more than the cap is FIN-006's finding, not a missing length finish
    for choice in a.assembled.choices.values():
        if choice.finish_reason != "length":
            yield finding(a, "FIN-007", f"finish_reason {choice.finish_reason!r} for output cut by the cap "
                          f"(completion_tokens {used if isinstance(used, int) else 'not reported'}, cap {cap})",
                          "length")


def _sequences(a: Analysis) -> list[str]:
    """The request's stop sequences (a string, or the non-empty strings of a list)."""
    stop = a.request["stop"]
    return [stop] if isinstance(stop, str) else [s for s in stop if isinstance(s, str) and s]


@check("FIN-008", when=(chat_answer, lambda a: bool(a.request.get("stop"))))
def stop_sequences(a: Analysis) -> Iterator[Finding]:
    sequences = _sequences(a)
    for choice in a.assembled.choices.values():
        for seq in sequences:
            if seq in choice.content:
                yield finding(a, "FIN-008", f"content containing the stop sequence {seq!r}",
                              "generation stopped before the stop sequence, which is not returned")
                return


@check("FIN-010", when=(chat_answer, no_stream_error, lambda a: max_tokens(a) is not None
                        and isinstance((usage_of(a) or {}).get("completion_tokens"), int)
                        and a.request.get("n") in (None, 1) and a.intent not in BAD_INPUT))
def length_at_cap(a: Analysis) -> Iterator[Finding]:
    cap, used = max_tokens(a), (usage_of(a) or {})["completion_tokens"]
    for choice in a.assembled.choices.values():
        if choice.finish_reason == "length" and cap is not None and used < cap:
            yield finding(a, "FIN-010", f"finish_reason length after {used} of max_tokens {cap}",
                          f"length only once {cap} tokens were generated (else stop)")
            return


@check("FIN-011", when=(chat_answer, lambda a: a.exchange.observations.unstopped is not None
                        and bool(a.request.get("stop"))))
def stopped_at_sequence(a: Analysis) -> Iterator[Finding]:
    sequences = _sequences(a)
    unstopped = a.exchange.observations.unstopped or ""
    cut = min((i for i in (unstopped.find(seq) for seq in sequences) if i >= 0), default=None)
    if cut is None:
        return  # the same request without stop never produced a stop sequence: nothing to compare
    expected = unstopped[:cut]
    for choice in a.assembled.choices.values():
        got = choice.content
        if len(got) > len(expected) and got.startswith(expected) and not any(seq in got for seq in sequences):
            yield finding(a, "FIN-011", f"content {short(got)}: it went on after the stop sequence",
                          f"{short(expected)} (the answer without stop, {short(unstopped)}, cut before it)")
            return


def _plain(a: Analysis) -> bool:
    return chat_answer(a) and not a.request.get("tools") and not a.request.get("response_format") \
        and a.intent != Intent.EXPECT_LENGTH


@check("FIN-009", when=(_plain, no_stream_error))
def not_empty(a: Analysis) -> Iterator[Finding]:
    for choice in a.assembled.choices.values():
        if choice.finish_reason == "stop" and not (choice.content or choice.reasoning or choice.refusal
                                                   or choice.tool_calls):
            yield finding(a, "FIN-009", "finish_reason stop with no text at all", "an answer")
