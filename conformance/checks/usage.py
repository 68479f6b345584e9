"""Usage: opt-in, once, after the finish, on its own chunk, with consistent counts."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from conformance.checks.conditions import (
    chat_answer,
    chat_json,
    chat_sse,
    complete,
    no_stream_error,
    wants_usage,
)
from conformance.checks.registry import Finding, check, finding, short
from conformance.exchange import Analysis
from conformance.protocols.chat.payloads import Payload


def _first_usage(a: Analysis) -> Payload | None:
    """A stream's first chunk with usage."""
    first: Payload | None = a.watch.usage_first
    return first


@check("USG-001", when=(chat_sse, lambda a: a.exchange.request is not None and not wants_usage(a)))
def usage_opt_in(a: Analysis) -> Iterator[Finding]:
    first = _first_usage(a)
    if first is not None:
        yield finding(a, "USG-001", f"usage {short(first.value['usage'])} without include_usage",
                      "no usage unless stream_options.include_usage is true", event=first.index,
                      remedy="Clients that index choices[0] crash on an unrequested usage chunk.")


def _filter_block(a: Analysis) -> bool:
    return a.allows("filter-block-no-usage") and any(
        c.finish_reason == "content_filter" for c in a.assembled.choices.values())


@check("USG-003", when=(chat_sse, no_stream_error, lambda a: _first_usage(a) is not None))
def usage_after_finish(a: Analysis) -> Iterator[Finding]:
    """Seed 000's lifecycle puts usage after the finish: judged wherever a usage chunk is, the request known or not
    (an offline capture without --request included)."""
    first = a.watch.usage_first
    early = a.watch.usage_before_finish
    if early is not None:
        yield finding(a, "USG-003", f"usage at event {first.index}, before the finish at event "
                      f"{early.event_index}", "usage after the last finish_reason", event=first.index)


@check("USG-002", "USG-004", "USG-005", "USG-007", when=(chat_sse, wants_usage, no_stream_error))
def usage_placement(a: Analysis) -> Iterator[Finding]:
    w = a.watch
    if w.usage_first is None:
        if not _filter_block(a) and complete(a):
            yield finding(a, "USG-002", "no usage chunk", "one chunk with usage and choices: [] before [DONE]")
        return
    last = w.usage_last
    if w.usage_count > 1:
        yield finding(a, "USG-004", f"usage on {w.usage_count} chunks", "usage once", event=w.usage_first.index)
    if last.value.get("choices") != []:
        yield finding(a, "USG-005", f"a usage chunk with choices {short(last.value.get('choices'))}",
                      "choices: []", event=last.index)
    if w.usage_with_choices is not None:
        yield finding(a, "USG-007", "usage on a chunk that carries choices", "usage absent or null there",
                      event=w.usage_with_choices)


def _counts(usage: Any) -> Iterator[str]:
    if not isinstance(usage, dict):
        yield f"usage {short(usage)} is not an object"
        return
    values: dict[str, int] = {}
    for key in ("prompt_tokens", "completion_tokens", "total_tokens"):
        value = usage.get(key)
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            yield f"{key} {short(value)}"
            return
        values[key] = value
    if values["total_tokens"] != values["prompt_tokens"] + values["completion_tokens"]:
        yield (f"total_tokens {values['total_tokens']} with prompt_tokens {values['prompt_tokens']} "
               f"and completion_tokens {values['completion_tokens']}")


@check("USG-006", "USG-009", "USG-010", when=(chat_answer, lambda a: a.assembled.usage is not None))
def usage_counts(a: Analysis) -> Iterator[Finding]:
    usage = a.assembled.usage
    for problem in _counts(usage):
        yield finding(a, "USG-006", problem, "non-negative integers with total = prompt + completion")
        return
    for outer, inner, total in (("completion_tokens_details", "reasoning_tokens", "completion_tokens"),
                                ("prompt_tokens_details", "cached_tokens", "prompt_tokens")):
        details = usage.get(outer)
        part = details.get(inner) if isinstance(details, dict) else None
        if part is not None and (not isinstance(part, int) or part < 0 or part > usage[total]):
            yield finding(a, "USG-009", f"{outer}.{inner} {short(part)} with {total} {usage[total]}",
                          f"an integer between 0 and {total}")
    texts = [c.content for c in a.assembled.choices.values()]
    if any(texts) and usage["completion_tokens"] == 0:
        yield finding(a, "USG-010", "completion_tokens 0 for an answer with text", "the tokens generated")


@check("USG-008", when=(chat_json,))
def non_stream_usage(a: Analysis) -> Iterator[Finding]:
    if not isinstance(a.json_body.get("usage"), dict):
        yield finding(a, "USG-008", f"usage {short(a.json_body.get('usage'))}", "a usage object")
