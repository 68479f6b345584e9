"""The OpenAI Completions API: ``POST /v1/completions`` (a prompt in, ``choices[].text`` out), streamed as chunks of
the same ``text_completion`` object over SSE and ended by ``data: [DONE]``, or one completion object.

Sources: OpenAI API reference, "Completions" (create completion; the completion object). The stream's order is a
transition table in ``assembler``; the rules that read it are in ``conformance.protocols.completions.checks``. Its users are
real: lm-evaluation-harness's ``local-completions`` scores continuations with echo and logprobs, and
code-completion clients send a prompt and a suffix.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from conformance.protocols import Protocol
from conformance.protocols.completions.assembler import (
    Answer,
    Assembler,
    Choice,
    Violation,
    decode_and_assemble,
    from_completion,
    logprobs_problem,
)
from conformance.protocols.completions.payloads import DONE, OBJECT, Chunk, answers, classify
from conformance.protocols.event_assembler import analyze_events, tokens_of

if TYPE_CHECKING:
    from conformance.exchange import Analysis

NAME = "completions"


def analyze(a: Analysis, pieces: Iterable[bytes]) -> None:
    analyze_events(a, pieces, decode_and_assemble, from_completion)


def finished(a: Analysis) -> bool:
    """The generation ended: every choice finished (a stream without its [DONE] is CMP-003's, not a cut stream), a
    whole completion came, or an error."""
    answer = a.answer
    if not isinstance(answer, Answer):
        return False
    ended = bool(answer.choices) and all(c.finish_reason is not None for c in answer.choices.values())
    return answer.finished or ended or bool(answer.errors)


def tokens_used(a: Analysis) -> tuple[int, int]:
    return tokens_of(a.answer if isinstance(a.answer, Answer) else Answer(), "completion_tokens")


def client_view(a: Analysis) -> dict[str, Any]:
    """What a correct Completions client makes of an answer: the first choice's text and finish, usage, and complete
    when [DONE] ended a stream whose choices all finished (or a whole completion came)."""
    answer = a.answer if isinstance(a.answer, Answer) else Answer()
    usage = answer.usage if isinstance(answer.usage, dict) else None
    return {"content": answer.text, "reasoning": "", "refusal": None, "tool_calls": [],
            "finish_reason": answer.finish_reason, "error": answer.error, "usage": usage,
            "complete": answer.finished and not answer.errors and a.wire_error is None}


def shows(capability: str, a: Analysis) -> tuple[bool, str] | None:
    """completions-logprobs is shown by logprobs in the answer, completions-echo by the prompt echoed (a server may
    accept either and ignore it)."""
    answer = a.answer if isinstance(a.answer, Answer) else Answer()
    choices = list(answer.choices.values())
    if capability == "completions-logprobs":
        found = any(c.logprobs_seen for c in choices)
        return found, "logprobs in the answer" if found else "logprobs asked, none in the answer"
    if capability == "completions-echo":
        prompt = a.request.get("prompt")
        found = isinstance(prompt, str) and any(c.text.startswith(prompt) for c in choices)
        return found, "the prompt echoed" if found else "echo asked, the prompt not in the text"
    return None


def sniff(head: bytes) -> bool:
    """A Completions stream or object: ``"object": "text_completion"``."""
    return b'"object":"text_completion"' in head.replace(b" ", b"")


PROTOCOL = Protocol(
    pinned=("choices",),
    name=NAME, summary="the OpenAI Completions API's text_completion chunks on /v1/completions",
    routes=(("/chat/completions", None), ("/completions", "completions")), framing="sse", streams_by_default=False,
    analyze=analyze, finished=finished, tokens_used=tokens_used, answers=answers, sniff=sniff,
    path="/v1/completions", client_view=client_view, shows=shows, probe="completions-stream",
)

__all__ = ["DONE", "NAME", "OBJECT", "PROTOCOL", "Answer", "Assembler", "Choice", "Chunk", "Violation", "answers",
           "classify", "from_completion", "logprobs_problem"]
