"""The OpenAI Completions API: the stream's order the assembler's table judged in its one pass, and what each
completion holds (its object, choices, finish, usage, logprobs, echo, stop sequences, n).

Every rule here has ``protocol="completions"``: the registry runs these checks on /v1/completions exchanges only.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from conformance.checks.conditions import chat_answer, chat_json, chat_sse, complete
from conformance.checks.parity import repeatable, unstreamed_differences
from conformance.checks.registry import Finding, check, finding, order_check, short
from conformance.exchange import Analysis
from conformance.model import Intent
from conformance.protocols.completions.assembler import Answer
from conformance.protocols.completions.payloads import OBJECT

ORDER_RULES = ("CMP-002", "CMP-003", "CMP-004", "CMP-006", "CMP-007")
USAGE_KEYS = ("prompt_tokens", "completion_tokens", "total_tokens")


def _answer(a: Analysis) -> Answer:
    return a.answer if isinstance(a.answer, Answer) else Answer()


def _ended(a: Analysis) -> bool:
    """A whole answer: a completion object, or a stream read to its end."""
    return chat_json(a) or (chat_sse(a) and complete(a))


def _asked(a: Analysis, key: str) -> Any:
    return a.request.get(key)


chunk_order = order_check(ORDER_RULES, (chat_answer,), _answer, "payload(s) in this answer")


@check("CMP-001", when=(chat_answer,))
def completion_object(a: Analysis) -> Iterator[Finding]:
    answer = _answer(a)
    for obj, at in answer.objects.items():
        yield finding(a, "CMP-001", f"object {obj!r}", f"object {OBJECT!r}", event=at if answer.streamed else None)
        return
    first = answer.first if answer.streamed else answer.completion
    if not isinstance(first, dict):
        return
    problems = [f"{key} {short(first.get(key), 30)}" for key, kind in (("id", str), ("created", int), ("model", str))
                if not isinstance(first.get(key), kind) or isinstance(first.get(key), bool)]
    if problems:
        yield finding(a, "CMP-001", f"a {'chunk' if answer.streamed else 'completion'} with {', '.join(problems)}",
                      "id (a string), created (an integer), model (a string)", event=0 if answer.streamed else None)


@check("CMP-011", when=(chat_sse,))
def one_id(a: Analysis) -> Iterator[Finding]:
    ids = _answer(a).ids
    if len(ids) > 1:
        yield finding(a, "CMP-011", f"chunks with the ids {short(ids, 80)}", "the same id on every chunk")


@check("CMP-005", when=(_ended,))
def max_tokens(a: Analysis) -> Iterator[Finding]:
    answer = _answer(a)
    cap = _asked(a, "max_tokens")
    if not isinstance(cap, int) or isinstance(cap, bool) or cap < 1 or answer.errors:
        return
    usage = answer.usage if isinstance(answer.usage, dict) else {}
    used = usage.get("completion_tokens")
    n = _asked(a, "n") if isinstance(_asked(a, "n"), int) else 1
    if isinstance(used, int) and not isinstance(used, bool) and used > cap * max(n, 1):
        yield finding(a, "CMP-005", f"completion_tokens {used} for max_tokens {cap}", f"at most {cap * max(n, 1)}")
        return
    longer = a.exchange.observations.uncapped  # the same request with four times the cap, sent first
    text = answer.text
    if isinstance(longer, str) and len(longer) > len(text) and longer.startswith(text) and \
            a.intent == Intent.EXPECT_LENGTH and answer.finish_reason != "length":
        yield finding(a, "CMP-005", f"finish_reason {short(answer.finish_reason)} for a text cut short (the same "
                      f"request with a larger max_tokens went on: {short(longer[len(text):], 30)})",
                      "finish_reason length")


@check("CMP-006", when=(_ended,))
def usage(a: Analysis) -> Iterator[Finding]:
    answer = _answer(a)
    if answer.errors:
        return
    options = _asked(a, "stream_options")
    asked = isinstance(options, dict) and options.get("include_usage") is True
    if answer.streamed:
        if asked and answer.usage_chunks != 1:
            yield finding(a, "CMP-006", f"{answer.usage_chunks} usage chunk(s) for stream_options.include_usage",
                          "one chunk with usage and choices [], right before data: [DONE]")
        elif not asked and answer.usage_chunks:
            yield finding(a, "CMP-006", "a usage chunk in a stream that did not ask for one",
                          "usage only with stream_options.include_usage", event=answer.usage_at)
        if not asked or answer.usage is None:
            return
    problem = _usage_problem(answer.usage)
    if problem:
        yield finding(a, "CMP-006", f"usage {problem}", "usage: {prompt_tokens, completion_tokens, total_tokens}, "
                      "integers, total the sum", event=answer.usage_at if answer.streamed else None)


def _usage_problem(usage: Any) -> str:
    if not isinstance(usage, dict):
        return short(usage, 60)
    values = [usage.get(k) for k in USAGE_KEYS]
    counts = [v for v in values if isinstance(v, int) and not isinstance(v, bool) and v >= 0]
    if len(counts) != len(values):
        return short({k: usage.get(k) for k in USAGE_KEYS}, 80)
    if counts[0] + counts[1] != counts[2]:
        return f"total_tokens {values[2]} for {values[0]} + {values[1]}"
    return ""


@check("CMP-007", when=(_ended, lambda a: isinstance(a.request.get("logprobs"), int)))
def logprobs(a: Analysis) -> Iterator[Finding]:
    """Each choice's logprobs whole (the pieces a stream's chunks carried, each judged as it came): at most logprobs +
    1 alternatives for each token."""
    wanted = a.request["logprobs"]
    for choice in sorted(_answer(a).choices.values(), key=lambda c: c.index):
        if not choice.logprobs_seen or choice.logprob_problem:
            continue  # none: the capability's evidence; a broken one: the chunk's finding
        for n, top in enumerate(choice.top_logprobs):
            if isinstance(top, dict) and len(top) > wanted + 1:
                yield finding(a, "CMP-007", f"choice {choice.index} top_logprobs[{n}] with {len(top)} tokens for "
                              f"logprobs {wanted}", f"at most {wanted + 1} (the logprobs most likely, and the chosen)")
                return


@check("CMP-008", when=(chat_json, lambda a: a.request.get("echo") is True and isinstance(a.request.get("prompt"), str)))
def echo(a: Analysis) -> Iterator[Finding]:
    prompt = a.request["prompt"]
    for choice in sorted(_answer(a).choices.values(), key=lambda c: c.index):
        if not choice.text.startswith(prompt):
            yield finding(a, "CMP-008", f"choice {choice.index} text {short(choice.text, 60)}",
                          f"the prompt {short(prompt, 40)} first, then the completion")
            return
        if choice.logprobs_seen and not choice.logprob_problem and choice.tokens:
            covered = "".join(str(t) for t in choice.tokens)
            if not covered.startswith(prompt) or (choice.text_offset and choice.text_offset[0] != 0):
                yield finding(a, "CMP-008", f"choice {choice.index} logprobs whose tokens begin "
                              f"{short(covered[:len(prompt) + 10], 50)} (text_offset {short(choice.text_offset[:3])})",
                              "the prompt's tokens first, from text_offset 0 (lm-evaluation-harness scores the "
                              "continuation from them)")
                return


@check("CMP-009", when=(_ended, lambda a: bool(a.request.get("stop"))))
def stop_sequence(a: Analysis) -> Iterator[Finding]:
    stops = a.request["stop"]
    stops = [stops] if isinstance(stops, str) else [s for s in stops if isinstance(s, str)] if isinstance(stops, list) \
        else []
    for choice in sorted(_answer(a).choices.values(), key=lambda c: c.index):
        found = next((s for s in stops if s and s in choice.text), None)
        if found is not None:
            yield finding(a, "CMP-009", f"choice {choice.index} text {short(choice.text, 50)} holding {found!r}",
                          f"the text cut before {found!r}, which it does not hold")
            return


@check("CMP-010", when=(_ended, lambda a: isinstance(a.request.get("n"), int) and a.request["n"] > 1))
def n_choices(a: Analysis) -> Iterator[Finding]:
    want = a.request["n"]
    got = sorted(_answer(a).choices)
    if got != list(range(want)):
        yield finding(a, "CMP-010", f"choice indices {got}", f"indices {list(range(want))} for n={want}")


@check("CMP-012", when=(chat_sse, complete, repeatable))
def parity(a: Analysis) -> Iterator[Finding]:
    yield from unstreamed_differences(a, "CMP-012", skip=("usage",))  # (a stream asked for no usage)
