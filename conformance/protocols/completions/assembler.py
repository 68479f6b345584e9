"""The Completions API's chunks assembled, in one pass, into the completion a correct client builds (its choices'
text, logprobs and finish, the usage), with the stream's order judged as it goes.

Theory of operation. ``Assembler.feed`` takes one classified chunk at a time and keeps only state: one ``Choice`` per
index (its text pieces, its logprobs lists, its finish), the stream's id, whether usage came and where, whether
``[DONE]`` came, and the first few violations of each order rule. The order of a stream is one small transition table
over the stream's state (``STREAM``): chunks, then (with ``stream_options.include_usage``) one usage chunk with no
choices, then ``[DONE]``, last; and per choice, nothing after its finish.

Sources: OpenAI API reference, "Completions": the completion object and its streamed chunks (each the same object
with the choices' new text), ``logprobs`` ("the log probabilities on the logprobs most likely tokens, as well the
chosen tokens"; up to logprobs + 1 elements), ``stream_options.include_usage`` ("an additional chunk will be streamed
before the data: [DONE] message ... the choices field will always be an empty array").
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from conformance.protocols.completions import payloads as ev
from conformance.protocols.completions.payloads import Chunk, classify
from conformance.protocols.event_assembler import EventAssembler, joined
from conformance.protocols.event_assembler import Violation as Violation
from conformance.wire.sse import SSEEvent, SSEStats

# (state, chunk class) -> next state. Classes: chunk (with choices), usage (no choices, usage), done, error
STREAM: dict[tuple[str, str], str] = {
    ("start", "chunk"): "open",
    ("start", "error"): "failed",
    ("open", "chunk"): "open",
    ("open", "usage"): "usage",
    ("open", "error"): "failed",
    ("open", "done"): "done",
    ("usage", "done"): "done",
    ("failed", "done"): "done",
}
STREAM_RULE = {"start": "CMP-003", "open": "CMP-003", "usage": "CMP-006", "failed": "CMP-003", "done": "CMP-003"}


@dataclass(slots=True)
class Choice:
    """One choice as the stream built it."""

    index: int
    pieces: list[str] = field(default_factory=list)
    finish_reason: Any = None
    finished_at: int | None = None  # the chunk that carried its finish
    tokens: list[Any] = field(default_factory=list)
    token_logprobs: list[Any] = field(default_factory=list)
    top_logprobs: list[Any] = field(default_factory=list)
    text_offset: list[Any] = field(default_factory=list)
    logprobs_seen: bool = False  # a logprobs object came for it (not null)
    logprob_problem: str | None = None  # the first logprobs object that was not one (shape, lengths)

    @property
    def text(self) -> str:
        return joined(self.pieces)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"index": self.index, "text": self.text, "finish_reason": self.finish_reason}
        if self.logprobs_seen:
            out["logprobs"] = {"tokens": self.tokens, "token_logprobs": self.token_logprobs,
                               "top_logprobs": self.top_logprobs, "text_offset": self.text_offset}
        return out


@dataclass(slots=True)
class Answer:
    """What a correct client makes of a whole completion (streamed or not)."""

    choices: dict[int, Choice] = field(default_factory=dict)
    first: Any = None  # the first chunk's object
    ids: list[Any] = field(default_factory=list)  # the distinct ids the chunks carried (the first few)
    objects: dict[str, int] = field(default_factory=dict)  # each object value other than text_completion: its chunk
    usage: Any = None
    usage_chunks: int = 0
    usage_at: int | None = None
    usage_before_finish: bool = False  # a usage chunk came while a choice was still open
    done: bool = False
    errors: list[Any] = field(default_factory=list)
    chunks: int = 0
    deltas: int = 0  # chunks with text
    streamed: bool = True
    completion: Any = None  # the JSON body of a non-stream answer
    violations: list[Violation] = field(default_factory=list)
    violation_counts: dict[str, int] = field(default_factory=dict)

    @property
    def text(self) -> str:
        first = self.choices.get(0) or next(iter(self.choices.values()), None)
        return first.text if first is not None else ""

    @property
    def finish_reason(self) -> Any:
        first = self.choices.get(0) or next(iter(self.choices.values()), None)
        return first.finish_reason if first is not None else None

    @property
    def error(self) -> Any:
        return self.errors[0] if self.errors else None

    @property
    def finished(self) -> bool:
        """Ended as the protocol ends one: [DONE] after every choice finished (streamed), or a whole completion."""
        if not self.streamed:
            return isinstance(self.completion, dict)
        return self.done and bool(self.choices) and all(c.finish_reason is not None for c in self.choices.values())

    def to_json(self) -> dict[str, Any]:
        return {"choices": [c.to_json() for _, c in sorted(self.choices.items())], "usage": self.usage,
                "error": self.error, "done": self.done}


class Assembler(EventAssembler[Chunk], classify=classify, answer=Answer):
    """Feed chunks one at a time; the completion and the order violations build as they arrive."""

    answer: Answer
    _repeated: Choice | None = None  # the choice the template path's text goes to

    def feed(self, e: Chunk) -> None:
        a = self.answer
        self.enter(e)
        if e.kind == "invalid":
            return  # SSE-006 judges a payload that is not JSON; CMP-001 one that is not an object
        if self.state == "done":
            self._violate("CMP-003", e.index, f"a payload after data: [DONE] ({_clip(e.value)})",
                          "nothing after data: [DONE]")
            return
        klass = e.kind if e.kind in ("done", "error") else "usage" if _usage_only(e.value) else "chunk"
        nxt = STREAM.get((self.state, klass))
        if nxt is None:
            expected = ("the usage chunk right before data: [DONE]" if self.state == "usage" else
                        "chunks, then the usage chunk (when asked for), then data: [DONE]")
            self._violate(STREAM_RULE[self.state], e.index, f"a {klass} payload after the {self.state} state", expected)
        else:
            self.state = nxt
        if e.kind == "done":
            a.done = True
        elif e.kind == "error":
            if len(a.errors) < 16:
                a.errors.append(e.value)
        else:
            self._chunk(e, e.value)

    def settled(self, e: Chunk) -> tuple[str, str] | None:
        """A chunk of one choice's text and nothing else of note (no finish, no logprobs, no usage), in the chunks
        state: the next one like it but for its text moves nothing but the counters and the choice's text."""
        value = e.value
        if e.kind != "chunk" or self.state != "open" or not isinstance(value, dict) or value.get("usage") is not None \
                or value.get("object") != ev.OBJECT or value.get("id") not in self.answer.ids:
            return None
        choices = value.get("choices")
        if not isinstance(choices, list) or len(choices) != 1:
            return None
        raw = choices[0]
        text = raw.get("text")
        choice = self.answer.choices.get(raw.get("index"))
        if choice is None or choice.finish_reason is not None or raw.get("finish_reason") is not None \
                or raw.get("logprobs") is not None or not isinstance(text, str):
            return None
        self._repeated = choice
        return "text", text

    def repeat(self, index: int, offset: int, text: str) -> None:
        a = self.answer
        a.chunks += 1
        self._at = (index, offset)
        if text:
            self._repeated.pieces.append(text)  # type: ignore[union-attr]
            a.deltas += 1

    def _chunk(self, e: Chunk, value: dict[str, Any]) -> None:
        a = self.answer
        a.chunks += 1
        if a.first is None:
            a.first = {k: value.get(k) for k in ("id", "object", "created", "model")}
        if len(a.ids) < 4 and value.get("id") not in a.ids:
            a.ids.append(value.get("id"))
        obj = value.get("object")
        if obj is not None and obj != ev.OBJECT and len(a.objects) < 8:
            a.objects.setdefault(str(obj)[:40], e.index)
            self._mark()
        if value.get("usage") is not None:
            a.usage_chunks += 1
            a.usage, a.usage_at = value.get("usage"), e.index
            if any(c.finish_reason is None for c in a.choices.values()):
                a.usage_before_finish = True
            self._mark()
        choices = value.get("choices")
        if not isinstance(choices, list):
            self._violate("CMP-002", e.index, f"choices {_clip(choices)}", "choices: an array of choices")
            return
        for raw in choices:
            self._choice(e, raw)

    def _choice(self, e: Chunk, raw: Any) -> None:
        a = self.answer
        index = raw.get("index") if isinstance(raw, dict) else None
        if not isinstance(raw, dict) or not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < 128:
            self._violate("CMP-002", e.index, f"a choice {_clip(raw)}", "a choice with an integer index, from 0")
            return
        choice = a.choices.setdefault(index, Choice(index))
        text = raw.get("text")
        if not isinstance(text, str):
            self._violate("CMP-002", e.index, f"choice {index} text {_clip(text)}", "text: a string")
        elif text:
            if choice.finish_reason is not None:
                self._violate("CMP-004", e.index, f"text for choice {index} after its finish_reason "
                              f"{_clip(choice.finish_reason)}", "no text for a choice after its finish")
            choice.pieces.append(text)
            a.deltas += 1
        reason = raw.get("finish_reason")
        if reason is not None:
            if reason not in ev.FINISH_REASONS:
                self._violate("CMP-002", e.index, f"choice {index} finish_reason {_clip(reason)}",
                              "finish_reason null, or stop, length or content_filter")
            if choice.finish_reason is not None:
                self._violate("CMP-004", e.index, f"a second finish_reason for choice {index}", "one finish per choice")
            choice.finish_reason, choice.finished_at = reason, e.index
        self._logprobs(e, choice, raw.get("logprobs"), text if isinstance(text, str) else "")

    def _logprobs(self, e: Chunk, choice: Choice, value: Any, text: str) -> None:
        if value is None:
            return
        choice.logprobs_seen = True
        problem = logprobs_problem(value, text)
        if problem is not None:
            if choice.logprob_problem is None:
                choice.logprob_problem = problem
                self._violate("CMP-007", e.index, f"choice {choice.index} logprobs {problem}",
                              "tokens, token_logprobs, top_logprobs and text_offset: lists of one length, the "
                              "tokens joining into the text")
            return
        choice.tokens += value["tokens"]
        choice.token_logprobs += value["token_logprobs"]
        choice.top_logprobs += value["top_logprobs"] or []
        choice.text_offset += value["text_offset"]

    def close(self, complete: bool = True) -> Answer:
        """What the end shows; ``complete`` is False when the client stopped reading (nothing is missing then)."""
        a = self.answer
        if not complete or not a.chunks and not a.done:
            return a
        if not a.done and not a.errors:
            self._violate("CMP-003", None, "a stream that ends without data: [DONE]", "data: [DONE] last")
        if not a.errors:
            for index, choice in sorted(a.choices.items()):
                if choice.finish_reason is None:
                    self._violate("CMP-004", None, f"choice {index} never finished",
                                  "a finish_reason (stop, length or content_filter) for every choice")
        return a


def _usage_only(value: Any) -> bool:
    """The usage chunk stream_options.include_usage asks for: usage, and choices an empty array."""
    return isinstance(value, dict) and value.get("usage") is not None and value.get("choices") == []


def logprobs_problem(value: Any, text: str | None = None) -> str | None:
    """What is wrong with a logprobs object (None: nothing): the four lists, of one length; tokens strings (joining
    into ``text`` when given), logprobs numbers at most 0 (the first may be null: echo), offsets integers that do
    not decrease, top_logprobs entries objects of token -> logprob."""
    if not isinstance(value, dict):
        return f"{_clip(value)}: not an object"
    given = {k: value.get(k) for k in ev.LOGPROB_KEYS}
    if given["top_logprobs"] is None:  # null when logprobs 0 asks for no alternatives
        given["top_logprobs"] = []
    missing = [k for k, v in given.items() if not isinstance(v, list)]
    if missing:
        return f"without {', '.join(missing)}"
    lists: dict[str, list[Any]] = {k: v for k, v in given.items() if isinstance(v, list)}
    sizes = {k: len(v) for k, v in lists.items() if k != "top_logprobs" or v}
    if len(set(sizes.values())) > 1:
        return "with lists of different lengths (" + ", ".join(f"{k} {n}" for k, n in sizes.items()) + ")"
    tokens = lists["tokens"]
    if not all(isinstance(t, str) for t in tokens):
        return "with a token that is not a string"
    if text is not None and not any(t.startswith("bytes:") for t in tokens) and "".join(tokens) != text:
        return f"whose tokens join into {_clip(''.join(tokens))}, not the text {_clip(text)}"
    for n, lp in enumerate(lists["token_logprobs"]):
        if lp is None and n == 0:
            continue
        if not isinstance(lp, (int, float)) or isinstance(lp, bool) or lp != lp or lp > 1e-6:
            return f"token_logprobs[{n}] {_clip(lp)}: not a log probability (a number at most 0)"
    offsets = lists["text_offset"]
    if not all(isinstance(o, int) and not isinstance(o, bool) for o in offsets) or any(
            b < a for a, b in zip(offsets, offsets[1:], strict=False)):
        return f"text_offset {_clip(offsets)}: not integers in order"
    for n, top in enumerate(lists["top_logprobs"]):
        if top is None and n == 0:
            continue
        if not isinstance(top, dict) or not all(isinstance(v, (int, float)) and not isinstance(v, bool) and v <= 1e-6
                                                for v in top.values()):
            return f"top_logprobs[{n}] {_clip(top)}: not an object of token -> log probability"
    return None


def from_completion(body: Any) -> Answer:
    """The answer a non-stream completion object gives."""
    asm = Assembler()
    a = asm.answer
    a.streamed, a.completion = False, body
    if not isinstance(body, dict):
        return a
    if isinstance(body.get("error"), (dict, str)) and "choices" not in body:
        a.errors.append(body)
        return a
    asm._chunk(Chunk(0, 0, "chunk", body), body)
    a.usage = body.get("usage")
    return a


def decode_and_assemble(pieces: Iterable[bytes], max_events: int | None = None, watch: Any = None,
                        ) -> tuple[list[SSEEvent], SSEStats, list[Chunk], Assembler]:
    """Decode an SSE body delivered in pieces and assemble its chunks, in one pass."""
    return Assembler.decode(pieces, max_events, watch)


def _clip(value: Any, limit: int = 60) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    text = json.dumps(text, ensure_ascii=False) if isinstance(value, str) else text
    return text if len(text) <= limit else text[: limit - 1] + "…"
