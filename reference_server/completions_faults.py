"""The Completions API's faults for the self-test: defects of the kinds servers show on /v1/completions (each with the
rules that must catch it), and legal variations that must pass."""

from __future__ import annotations

import itertools
from typing import Any

from reference_server.faults import Fault, State

COMPLETIONS = ("/v1/completions",)
F = Fault
_IDS = itertools.count(1)


def _choices(chunk: dict[str, Any], change: Any) -> dict[str, Any]:
    choices = chunk.get("choices")
    return {**chunk, "choices": [change(c) for c in choices]} if isinstance(choices, list) else chunk


def _object(value: str) -> Any:
    def apply(chunk: dict[str, Any], state: State) -> list[Any]:
        return [{**chunk, "object": value}]
    return apply


def _text_after_finish(chunk: dict[str, Any], state: State) -> list[Any]:
    """The finish chunk followed by one more piece of text for the same choice."""
    choices = chunk.get("choices") or []
    if any(isinstance(c, dict) and c.get("finish_reason") for c in choices):
        return [chunk, {**chunk, "choices": [{"text": " again", "index": 0, "logprobs": None, "finish_reason": None}]}]
    return [chunk]


def _short_offsets(chunk: dict[str, Any], state: State) -> list[Any]:
    """Each logprobs object's text_offset one entry short (the lists no longer of one length)."""
    def change(choice: dict[str, Any]) -> dict[str, Any]:
        lp = choice.get("logprobs")
        if isinstance(lp, dict) and lp.get("text_offset"):
            return {**choice, "logprobs": {**lp, "text_offset": lp["text_offset"][:-1]}}
        return choice
    return [_choices(chunk, change)]


def _short_offsets_body(value: Any, state: State) -> Any:
    return _short_offsets(value, state)[0] if isinstance(value, dict) and "choices" in value else value


def _no_echo(value: Any, state: State) -> Any:
    """echo ignored: the completion without the prompt before it (and without the prompt's logprobs)."""
    request = state.get("request") or {}
    prompt = request.get("prompt") if isinstance(request, dict) else None
    if not (isinstance(value, dict) and request.get("echo") is True and isinstance(prompt, str)):
        return value

    def change(choice: dict[str, Any]) -> dict[str, Any]:
        text = choice.get("text")
        out = {**choice, "text": text[len(prompt):] if isinstance(text, str) and text.startswith(prompt) else text}
        lp = choice.get("logprobs")
        if isinstance(lp, dict) and isinstance(lp.get("tokens"), list):
            keep, total = [], 0
            for n, token in enumerate(lp["tokens"]):
                if total >= len(prompt):
                    keep.append(n)
                total += len(token)
            out["logprobs"] = {k: [lp[k][n] for n in keep] if isinstance(lp.get(k), list) else lp.get(k)
                               for k in ("tokens", "token_logprobs", "top_logprobs", "text_offset")}
        return out
    return _choices(value, change)


def _usage_always(chunk: dict[str, Any], state: State) -> list[Any]:
    """A usage chunk after the finish, asked for or not."""
    choices = chunk.get("choices") or []
    if any(isinstance(c, dict) and c.get("finish_reason") for c in choices) and not state.get("usage_sent"):
        state["usage_sent"] = True
        return [chunk, {**chunk, "choices": [], "usage": {"prompt_tokens": 1, "completion_tokens": 1,
                                                          "total_tokens": 2}}]
    if chunk.get("choices") == [] and chunk.get("usage") is not None:
        return [] if state.get("usage_sent") else [chunk]
    return [chunk]


def _new_id(chunk: dict[str, Any], state: State) -> list[Any]:
    return [{**chunk, "id": f"cmpl-{next(_IDS):024d}"}]


def _no_stop(body: Any) -> Any:
    return {k: v for k, v in body.items() if k != "stop"} if isinstance(body, dict) else body


def _length_as_stop(chunk: dict[str, Any], state: State) -> list[Any]:
    return [_choices(chunk, lambda c: {**c, "finish_reason": "stop"} if c.get("finish_reason") == "length" else c)]


def _without_object(chunk: dict[str, Any], state: State) -> list[Any]:
    return [{k: v for k, v in chunk.items() if k != "object"}]


DEFECTS: list[Fault] = [
    F("completions-chat-object", ("CMP-001",), "chunks labelled chat.completion.chunk on /v1/completions (a server "
      "that reuses its chat chunk builder)", paths=COMPLETIONS, chunk=_object("chat.completion.chunk")),
    F("completions-no-done", ("CMP-003",), "no data: [DONE] at the end of a completions stream", paths=COMPLETIONS,
      done=lambda state: b""),
    F("completions-text-after-finish", ("CMP-004",), "text for a choice after its finish_reason", paths=COMPLETIONS,
      chunk=_text_after_finish),
    F("completions-logprobs-short", ("CMP-007",), "logprobs lists of different lengths (text_offset one short)",
      paths=COMPLETIONS, chunk=_short_offsets, body=_short_offsets_body),
    F("completions-echo-ignored", ("CMP-015",), "echo ignored: the completion without the prompt before it "
      "(lm-evaluation-harness then scores the wrong tokens)", paths=COMPLETIONS, body=_no_echo,
      request=lambda body: body),
    F("completions-usage-unasked", ("CMP-006",), "a usage chunk in every stream, asked for or not", paths=COMPLETIONS,
      chunk=_usage_always),
    F("completions-ids-differ", ("CMP-011",), "a new id on every chunk of one stream", paths=COMPLETIONS,
      chunk=_new_id),
    F("completions-stop-ignored", ("CMP-009",), "stop sequences ignored (the text holds them)", paths=COMPLETIONS,
      request=_no_stop),
    F("completions-length-as-stop", ("CMP-005",), "finish_reason stop for a completion cut by max_tokens",
      paths=COMPLETIONS, chunk=_length_as_stop),
]

LEGAL: list[Fault] = [
    F("completions-no-object", (), "chunks without an object field (its place, where present, is text_completion)",
      legal=True, paths=COMPLETIONS, chunk=_without_object),
    F("completions-byte-writes", (), "a completions stream written a byte at a time", legal=True, paths=COMPLETIONS,
      split_bytes=True),
]
