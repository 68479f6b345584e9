"""Reasoning: which carrier, balanced markers, separate channels, reasoning_effort honored."""

from __future__ import annotations

from collections.abc import Iterator

from conformance.checks.conditions import chat_answer, chat_sse
from conformance.checks.registry import Finding, check, finding
from conformance.exchange import Analysis
from conformance.protocols.chat.payloads import THINK_CLOSE, THINK_OPEN


@check("RSN-001", "RSN-002", "RSN-003", "RSN-004", when=(chat_answer,))
def carriers(a: Analysis) -> Iterator[Finding]:
    for choice in a.assembled.choices.values():
        if choice.think.seen:
            yield finding(a, "RSN-001", "reasoning inline as <think>…</think> in content",
                          "reasoning in delta.reasoning_content")
        if "reasoning" in choice.carriers and "reasoning_content" not in choice.carriers:
            yield finding(a, "RSN-002", "reasoning in the reasoning key",
                          "reasoning_content, which more clients read")
        raw = choice.raw_content
        opened = raw.find(THINK_OPEN)
        closed = raw.find(THINK_CLOSE)
        if closed >= 0 and (opened < 0 or opened > closed):
            yield finding(a, "RSN-003", "</think> in content with no <think> before it",
                          "balanced markers, or none")
        separated = {"reasoning_content", "reasoning"} & set(choice.carriers)
        if separated and (opened >= 0 or closed >= 0):
            yield finding(a, "RSN-004", f"think markup in content beside {sorted(separated)}",
                          "reasoning only in its own channel")


@check("RSN-011", when=(chat_answer,))
def markup_in_reasoning(a: Analysis) -> Iterator[Finding]:
    for index, choice in sorted(a.assembled.choices.items()):
        tags = [t for t in (THINK_OPEN, THINK_CLOSE) if t in choice.reasoning]
        if tags:
            yield finding(a, "RSN-011", f"choice {index} reasoning holds {', '.join(tags)}",
                          "the reasoning text only, its markup stripped",
                          remedy="Clients show reasoning_content as it comes: the tags appear to the user.")


def _effort(a: Analysis) -> object:
    return a.request.get("reasoning_effort")


@check("RSN-005", "RSN-006", when=(chat_answer, lambda a: isinstance(_effort(a), str)))
def effort(a: Analysis) -> Iterator[Finding]:
    if a.assembled.error is not None:
        return
    for choice in a.assembled.choices.values():
        if _effort(a) == "none" and choice.reasoning:
            yield finding(a, "RSN-006", f"{len(choice.reasoning)} characters of reasoning",
                          "no reasoning with reasoning_effort none")
        elif _effort(a) != "none" and not choice.reasoning and choice.finish_reason != "length":
            yield finding(a, "RSN-005", f"no reasoning with reasoning_effort {_effort(a)!r}",
                          "a reasoning channel (or a 400 when reasoning is unsupported)")


@check("RSN-007", when=(chat_sse,))
def reasoning_first(a: Analysis) -> Iterator[Finding]:
    if a.watch.late_reasoning is not None:
        yield finding(a, "RSN-007", "reasoning after the answer began", "reasoning before the answer",
                      event=a.watch.late_reasoning)
