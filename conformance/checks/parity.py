"""Stream/non-stream parity (issue 23): the same deterministic request answered streamed and not must be the same
answer. CanIToolCall publishes this check nightly; vLLM measured its own ``llama3_json`` tool parser valid in 52 of
250 streamed cases where the non-stream parse was valid: a stream assembled by a different path than the message.

The parity scenarios (kind ``parity``) send the request unstreamed twice, then streamed; the first unstreamed
answer is kept on the streamed exchange as ``observations.unstreamed`` (``view``), with whether the second matched
it (``repeatable``). Only a repeatable server is judged: where two identical unstreamed requests already differ,
no difference of the stream can be blamed on streaming.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from conformance.checks.conditions import chat_answer, chat_sse, complete
from conformance.checks.registry import Finding, check, finding, short
from conformance.exchange import Analysis, Exchange, analyze, assembled_json

USAGE_KEYS = ("prompt_tokens", "completion_tokens", "total_tokens")
KEEP = 4096  # characters of content and reasoning kept in the wire log's observation


def view(a: Analysis) -> dict[str, Any]:
    """What parity compares of an answer: (chat) the first choice's content, reasoning, tool calls (names and raw
    arguments), finish reason and the usage totals; another protocol's, as its client view gives them."""
    protocol = a.protocol
    doc = protocol.client_view(a) if protocol is not None and protocol.client_view is not None else assembled_json(a)
    usage = doc.get("usage") if isinstance(doc.get("usage"), dict) else None
    return {
        "content": str(doc.get("content") or "")[:KEEP], "reasoning": str(doc.get("reasoning") or "")[:KEEP],
        "tool_calls": [{"name": c.get("name"), "arguments": c.get("arguments")} for c in doc.get("tool_calls") or []
                       if isinstance(c, dict)],
        "finish_reason": doc.get("finish_reason"),
        "usage": None if usage is None else {k: usage[k] for k in USAGE_KEYS if isinstance(usage.get(k), int)},
    }


def unstreamed(ex: Exchange, profile: str) -> dict[str, Any] | None:
    """The parity view of an unstreamed answer (None unless it is a 200 chat completion)."""
    if ex.status != 200:
        return None
    a = analyze(ex, profile)
    return view(a) if chat_answer(a) and not chat_sse(a) else None


def _arguments(raw: Any) -> Any:
    """Arguments as parsed JSON (so that spacing and key order do not count), else as sent."""
    if isinstance(raw, str):
        try:
            return json.loads(raw)
        except ValueError:
            return raw
    return raw


def differences(want: dict[str, Any], got: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(what, streamed, unstreamed) for each compared field that differs."""
    out = []
    for key in ("content", "reasoning", "finish_reason"):
        if (want.get(key) or "") != (got.get(key) or ""):
            out.append((key, short(got.get(key)), short(want.get(key))))
    calls = [[(c.get("name"), _arguments(c.get("arguments"))) for c in d.get("tool_calls") or []] for d in (want, got)]
    if calls[0] != calls[1]:
        out.append(("tool calls", short(calls[1]), short(calls[0])))
    if isinstance(want.get("usage"), dict) and isinstance(got.get("usage"), dict):
        keys = [k for k in USAGE_KEYS if k in want["usage"] and k in got["usage"]]
        if [want["usage"][k] for k in keys] != [got["usage"][k] for k in keys]:
            out.append(("usage", short({k: got["usage"][k] for k in keys}), short({k: want["usage"][k] for k in keys})))
    return out


def repeatable(a: Analysis) -> bool:
    """The same request unstreamed was answered twice the same (only then can a stream's difference be blamed)."""
    seen = a.exchange.observations.unstreamed
    return isinstance(seen, dict) and seen.get("repeatable") is True


def unstreamed_differences(a: Analysis, rule: str, *, skip: tuple[str, ...] = (), remedy: str = "") -> Iterator[Finding]:
    """The parity finding of every protocol: what the stream assembled that the unstreamed answer did not (``skip``:
    what the two requests did not ask alike)."""
    want = a.exchange.observations.unstreamed or {}
    found = [d for d in differences(want, view(a)) if d[0] not in skip]
    if found:
        yield finding(a, rule, "; ".join(f"{what} {got}" for what, got, _ in found),
                      "; ".join(f"{what} {wanted}" for what, _, wanted in found) + " (the same request unstreamed, "
                      "twice the same)", remedy=remedy)


@check("CHK-022", when=(chat_sse, complete, repeatable))
def parity(a: Analysis) -> Iterator[Finding]:
    yield from unstreamed_differences(a, "CHK-022", remedy="Assemble the stream from the same output as the message: "
                                      "the same parser for tool calls and reasoning, the same finish and the same counts.")
