"""The Messages API's events assembled, in one pass, into the message a correct client builds, with the event order
judged as it goes.

Theory of operation. ``Assembler.feed`` takes one classified event at a time and keeps only state: the message's
lifecycle state, one state per content block, the joined deltas, and the first few violations of each order rule
(``Violation``, carrying its rule id). Nothing is re-walked after the stream ends; ``close`` adds what only the end
can show (a block never stopped, no ``message_stop``).

The order rules are two small transition tables, in the spirit of h11's ``_state.py``: ``MESSAGE`` (the message:
``message_start``, its blocks, one or more ``message_delta``, ``message_stop``; ``ping`` anywhere; an ``error``
ends it) and ``BLOCK`` (one content block: ``content_block_start``, its deltas, ``content_block_stop``). A pair
missing from a table is a violation of the rule its ``*_RULE`` names. Indices are judged beside the block table: the
next block's index is the number of blocks before it (from 0, consecutive), and one block is open at a time.

Sources: Anthropic API reference, "Streaming Messages" (event flow, delta types, the example streams) and
"Messages" (the message object, content blocks, stop_reason, usage).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from conformance.protocols.event_assembler import MAX_VIOLATIONS as MAX_VIOLATIONS
from conformance.protocols.event_assembler import EventAssembler, joined
from conformance.protocols.event_assembler import Violation as Violation
from conformance.protocols.messages import payloads as ev
from conformance.protocols.messages.payloads import Event, classify
from conformance.wire.sse import SSEEvent, SSEStats

MAX_ERRORS = 16

# -- the tables: (state, event class) -> next state ------------------------------------------------------------
# event classes: start (message_start), block (a content block event), delta (message_delta), stop (message_stop),
# ping, error, other (a type this suite does not know: legal, "handle unknown events gracefully")
MESSAGE: dict[tuple[str, str], str] = {
    ("start", "ping"): "start",
    ("start", "error"): "failed",  # an overloaded_error may be the first event
    ("start", "start"): "open",
    ("open", "block"): "open",
    ("open", "ping"): "open",
    ("open", "other"): "open",
    ("open", "error"): "failed",
    ("open", "delta"): "closing",
    ("closing", "delta"): "closing",  # one or more message_delta events
    ("closing", "ping"): "closing",
    ("closing", "other"): "closing",
    ("closing", "error"): "failed",
    ("closing", "stop"): "stopped",
}
MESSAGE_RULE = {"start": "MSG-001", "open": "MSG-002", "closing": "MSG-002", "stopped": "MSG-002",
                "failed": "MSG-022"}

BLOCK: dict[tuple[str, str], str] = {
    ("none", "start"): "open",
    ("open", "delta"): "open",
    ("open", "stop"): "stopped",
}
BLOCK_RULE = "MSG-007"
BLOCK_CLASS = {ev.BLOCK_START: "start", ev.BLOCK_DELTA: "delta", ev.BLOCK_STOP: "stop"}
CLASS = {ev.MESSAGE_START: "start", ev.MESSAGE_DELTA: "delta", ev.MESSAGE_STOP: "stop", ev.PING: "ping",
         ev.ERROR: "error", ev.BLOCK_START: "block", ev.BLOCK_DELTA: "block", ev.BLOCK_STOP: "block"}
STATE_WORDS = {"none": "never started", "open": "already started", "stopped": "already stopped"}



@dataclass(slots=True)
class Block:
    """One content block as the stream (or the message's content) built it."""

    index: int
    type: str = ""
    state: str = "none"
    start: Any = None  # content_block_start's content_block (or the message's content entry)
    pieces: list[str] = field(default_factory=list)  # text, thinking, or the input's partial_json
    signature_pieces: list[str] = field(default_factory=list)
    id: Any = None
    name: Any = None
    given_input: Any = None  # a non-stream tool_use block's input, or content_block_start's input
    streamed: bool = True

    @property
    def text(self) -> str:
        return joined(self.pieces)

    @property
    def signature(self) -> str:
        return joined(self.signature_pieces)

    @property
    def input(self) -> Any:
        """A tool_use block's input: the joined partial_json parsed (an empty join is {}), or the given input; a
        join that does not parse is ``INVALID``."""
        if not self.streamed or self.type not in ("tool_use", "server_tool_use"):
            return self.given_input
        joined = self.text
        if not joined.strip():
            return self.given_input if isinstance(self.given_input, dict) and self.given_input else {}
        try:
            return json.loads(joined)
        except ValueError:
            return INVALID

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.type}
        if self.type == "text":
            out["text"] = self.text
        elif self.type in ("tool_use", "server_tool_use"):
            value = self.input
            out.update(id=self.id, name=self.name, input=None if value is INVALID else value)
        elif self.type == "thinking":
            out.update(thinking=self.text, signature=self.signature)
        elif self.type == "redacted_thinking":
            out["data"] = self.start.get("data") if isinstance(self.start, dict) else None
        return out


class _Invalid:
    def __repr__(self) -> str:
        return "<partial_json that does not parse>"


INVALID: Any = _Invalid()


@dataclass(slots=True)
class Answer:
    """What a correct client makes of a whole Messages answer (streamed or not)."""

    message: Any = None  # message_start's message (or the non-stream body)
    blocks: dict[int, Block] = field(default_factory=dict)
    stop_reason: Any = None
    stop_sequence: Any = None
    delta_seen: bool = False  # a message_delta arrived (or the body is a whole message)
    start_usage: Any = None  # message_start's message.usage
    delta_usage: Any = None  # the last message_delta's usage
    output_tokens_seen: list[int] = field(default_factory=list)  # message_delta usage.output_tokens, in order (16)
    stopped: bool = False  # message_stop seen
    errors: list[Any] = field(default_factory=list)  # error events' payloads
    events: int = 0
    pings: int = 0
    unknown_types: dict[str, int] = field(default_factory=dict)
    unnamed: int = 0  # events sent without an event: field
    first_unnamed: int | None = None
    first_of: dict[str, int] = field(default_factory=dict)  # the first event of each type (the first 64 types)
    deltas: int = 0  # content_block_delta events
    violations: list[Violation] = field(default_factory=list)
    violation_counts: dict[str, int] = field(default_factory=dict)
    streamed: bool = True

    @property
    def text(self) -> str:
        return "".join(b.text for _, b in sorted(self.blocks.items()) if b.type == "text")

    @property
    def thinking(self) -> str:
        return "".join(b.text for _, b in sorted(self.blocks.items()) if b.type == "thinking")

    @property
    def calls(self) -> list[Block]:
        return [b for _, b in sorted(self.blocks.items()) if b.type == "tool_use"]

    @property
    def usage(self) -> dict[str, Any] | None:
        """The usage a client ends with: message_start's, updated by the last message_delta's (cumulative)."""
        start = self.start_usage if isinstance(self.start_usage, dict) else None
        delta = self.delta_usage if isinstance(self.delta_usage, dict) else None
        if start is None and delta is None:
            return None
        return {**(start or {}), **{k: v for k, v in (delta or {}).items() if v is not None}}

    @property
    def error(self) -> Any:
        return self.errors[0] if self.errors else None

    @property
    def complete(self) -> bool:
        """Ended as the protocol ends a message: message_stop (streamed), or a whole message object."""
        return (self.stopped if self.streamed else isinstance(self.message, dict)) and not self.errors

    def to_json(self) -> dict[str, Any]:
        return {"stop_reason": self.stop_reason, "stop_sequence": self.stop_sequence, "text": self.text,
                "content": [b.to_json() for _, b in sorted(self.blocks.items())], "usage": self.usage,
                "error": self.error, "stopped": self.stopped}


class Assembler(EventAssembler[Event], classify=classify, answer=Answer):
    """Feed events one at a time; the message and the order violations build as they arrive."""

    answer: Answer
    lifecycle, lifecycle_rule, first = MESSAGE, MESSAGE_RULE, "message_start first (after any ping)"
    open_block: int | None = None
    _repeated: Block | None = None  # the block the template path's deltas go to

    # -- feeding ---
    def feed(self, e: Event) -> None:
        a = self.answer
        a.events += 1
        self.enter(e)
        kind = e.type
        if kind not in a.first_of and len(a.first_of) < 64:
            a.first_of[kind] = e.index
            self._mark()
        if e.kind == "invalid":
            what = f"not JSON ({e.problem})" if e.problem else "not an object with a string type"
            self._violate("MSG-003", e.index, f"a payload that is {what}", "a JSON object with a string type")
            return
        if e.sse_type == "message":
            a.unnamed += 1
            if a.first_unnamed is None:
                a.first_unnamed = e.index
                self._mark()
        elif e.sse_type != kind:
            self._violate("MSG-004", e.index, f"event: {e.sse_type} for a payload of type {kind}",
                          "event: equal to the payload's type")
        value = e.value
        klass = CLASS.get(kind, "other")
        if klass == "other" and (kind in a.unknown_types or len(a.unknown_types) < 64):
            a.unknown_types[kind] = a.unknown_types.get(kind, 0) + 1
        self._step(klass, e, kind)
        if kind == ev.MESSAGE_START:
            if a.message is None:
                message = value.get("message")
                a.message = message
                a.start_usage = message.get("usage") if isinstance(message, dict) else None
        elif klass == "block":
            self._block_event(e, kind, value)
        elif kind == ev.MESSAGE_DELTA:
            self._message_delta(e, value)
        elif kind == ev.MESSAGE_STOP:
            a.stopped = True
        elif kind == ev.PING:
            a.pings += 1
        elif kind == ev.ERROR and len(a.errors) < MAX_ERRORS:
            a.errors.append(value)

    def settled(self, e: Event) -> tuple[str, str] | None:
        """A text, thinking or input_json delta of the open block, named by its event: the next one like it but for
        its text moves nothing but the counters and the block's text (``EventAssembler.feed_events``)."""
        value = e.value
        if e.kind != "event" or e.type != ev.BLOCK_DELTA or e.sse_type != e.type or self.state != "open":
            return None
        block = self.answer.blocks.get(value.get("index"))  # (an int: the event violated nothing)
        delta = value.get("delta")
        if block is None or block.state != "open" or self.open_block != block.index or not isinstance(delta, dict):
            return None
        key = {"text_delta": "text", "thinking_delta": "thinking", "input_json_delta": "partial_json"}.get(
            delta.get("type"))  # type: ignore[arg-type]
        piece = delta.get(key) if key is not None else None
        if key is None or not isinstance(piece, str):
            return None
        self._repeated = block
        return key, piece

    def repeat(self, index: int, offset: int, text: str) -> None:
        a = self.answer
        a.events += 1
        a.deltas += 1
        self._at = (index, offset)
        self._repeated.pieces.append(text)  # type: ignore[union-attr]

    def _off(self, rule: str, klass: str, e: Event, name: str) -> None:
        if self.state == "failed":
            self._violate(rule, e.index, f"{name} after an error event", "nothing after the error event")
        elif self.state == "stopped":
            self._violate(rule, e.index, f"{name} after message_stop", "nothing after message_stop")
        elif klass == "start":
            self._violate(rule, e.index, "a second message_start", "one message_start")
        elif self.state == "open" and klass == "stop":
            self._violate(rule, e.index, "message_stop before any message_delta",
                          "message_delta (stop_reason, usage), then message_stop")
            self.state = "stopped"
        elif self.state == "closing" and klass == "block":
            self._violate(rule, e.index, f"{name} after message_delta", "every content block before message_delta")

    def _block_event(self, e: Event, kind: str, value: dict[str, Any]) -> None:
        a = self.answer
        index = value.get("index")
        if not isinstance(index, int) or isinstance(index, bool):
            self._violate(BLOCK_RULE, e.index, f"{kind} without an integer index", "index on every content block event")
            return
        klass = BLOCK_CLASS[kind]
        block = a.blocks.get(index)
        state = block.state if block is not None else "none"
        if klass == "start":
            expected = len(a.blocks)
            if block is None and index != expected:
                self._violate(BLOCK_RULE, e.index, f"content_block_start index {index} after {expected} block(s)",
                              f"index {expected}: indices from 0, consecutive")
            if self.open_block is not None and self.open_block != index:
                self._violate(BLOCK_RULE, e.index, f"content_block_start index {index} while index "
                              f"{self.open_block} is open", "content_block_stop before the next block starts")
        nxt = BLOCK.get((state, klass))
        if nxt is None:
            self._violate(BLOCK_RULE, e.index, f"{kind} for index {index}, a block {STATE_WORDS[state]}",
                          "content_block_start, the block's deltas, then content_block_stop")
            if block is None or state == "stopped":
                return  # nothing to build on: a delta of a block never started, or after its stop
        if block is None:
            block = a.blocks[index] = Block(index)
        if klass == "start":
            self._block_start(e, block, value.get("content_block"))
        elif klass == "delta":
            a.deltas += 1
            self._block_delta(e, block, value.get("delta"))
        else:
            block.state = "stopped"
            if self.open_block == index:
                self.open_block = None

    def _block_start(self, e: Event, block: Block, obj: Any) -> None:
        block.state = "open"
        self.open_block = block.index
        block.start = obj
        if not isinstance(obj, dict):
            self._violate("MSG-013", e.index, f"content_block {_clip(obj)}", "a content block object with a type")
            return
        block.type = str(obj.get("type", ""))
        block.id, block.name = obj.get("id"), obj.get("name")
        block.given_input = obj.get("input")
        problem = block_problem(obj, streamed=True)
        if problem:
            self._violate("MSG-013", e.index, f"content_block_start {problem}", BLOCK_SHAPES.get(block.type, ""))
        if block.type == "text" and isinstance(obj.get("text"), str) and obj["text"]:
            block.pieces.append(obj["text"])
        elif block.type == "thinking" and isinstance(obj.get("thinking"), str) and obj["thinking"]:
            block.pieces.append(obj["thinking"])
        if block.type == "thinking" and isinstance(obj.get("signature"), str) and obj["signature"]:
            block.signature_pieces.append(obj["signature"])

    def _block_delta(self, e: Event, block: Block, delta: Any) -> None:
        kind = delta.get("type") if isinstance(delta, dict) else None
        allowed = ev.DELTAS.get(block.type)
        if not isinstance(kind, str):
            self._violate("MSG-008", e.index, f"a delta {_clip(delta)} without a type", "a typed delta")
            return
        if allowed is not None and kind not in allowed:
            self._violate("MSG-008", e.index, f"{kind} in a {block.type} block", f"one of {sorted(allowed)}")
            return
        if allowed is None and block.type == "redacted_thinking":
            self._violate("MSG-008", e.index, f"{kind} in a redacted_thinking block", "no delta: its data is whole")
            return
        key = ev.DELTA_FIELD.get(kind)
        piece = delta.get(key) if key is not None else None
        if key in ("text", "partial_json", "thinking", "signature") and not isinstance(piece, str):
            self._violate("MSG-008", e.index, f"{kind} with {key} {_clip(piece)}", f"{key}: a string")
            return
        if kind == "signature_delta" and isinstance(piece, str):
            block.signature_pieces.append(piece)
        elif key in ("text", "partial_json", "thinking") and isinstance(piece, str):
            block.pieces.append(piece)

    def _message_delta(self, e: Event, value: dict[str, Any]) -> None:
        a = self.answer
        if self.open_block is not None:
            self._violate("MSG-009", e.index, f"message_delta with content block {self.open_block} still open",
                          "content_block_stop for every block before message_delta")
            self.open_block = None
        a.delta_seen = True
        delta = value.get("delta")
        if isinstance(delta, dict):
            a.stop_reason = delta.get("stop_reason", a.stop_reason)
            a.stop_sequence = delta.get("stop_sequence", a.stop_sequence)
        usage = value.get("usage")
        a.delta_usage = usage
        tokens = usage.get("output_tokens") if isinstance(usage, dict) else None
        if isinstance(tokens, int) and not isinstance(tokens, bool) and len(a.output_tokens_seen) < 16:
            a.output_tokens_seen.append(tokens)
        problem = delta_problem(value)
        if problem:
            self._violate("MSG-011", e.index, f"message_delta {problem}",
                          "delta.stop_reason (a documented value) and usage.output_tokens (an integer)")

    # -- the end -----------------------------------------------------------------------------------------------
    def close(self, complete: bool = True) -> Answer:
        """What the end shows; ``complete`` is False when the client stopped reading (nothing is missing then)."""
        a = self.answer
        if not complete or not a.events:
            return a
        if self.state in ("open", "closing", "start") and not a.errors:
            self._violate("MSG-002", None, "a stream that ends without message_stop",
                          "message_delta, then message_stop last")
        if self.state != "failed" and self.open_block is not None:
            self._violate("MSG-009", None, f"content block {self.open_block} started and never stopped",
                          "content_block_stop for every block")
        last = max((b.index for b in a.blocks.values()), default=None)
        for block in a.calls:
            if a.stop_reason == "max_tokens" and block.index == last:
                continue  # cut by max_tokens inside its input: Anthropic's tool-use page says the input is incomplete
            if block.state == "stopped" and block.input is INVALID:
                self._violate("MSG-010", None, f"tool_use block {block.index}: joined partial_json "
                              f"{_clip(block.text)} that does not parse", "partial_json pieces that join into a JSON "
                              "object (the tool's input)")
            elif block.state == "stopped" and not isinstance(block.input, dict):
                self._violate("MSG-010", None, f"tool_use block {block.index}: input {_clip(block.input)}",
                              "a JSON object")
        return a


BLOCK_SHAPES = {
    "text": "a text block: text, a string (empty at content_block_start)",
    "tool_use": "a tool_use block: id and name strings, input an object ({} at content_block_start)",
    "thinking": "a thinking block: thinking, a string",
    "redacted_thinking": "a redacted_thinking block: data, a string",
}


def block_problem(obj: dict[str, Any], streamed: bool) -> str | None:
    """What is wrong with a content block's shape (None: nothing, or a type this suite does not know)."""
    kind = obj.get("type")
    if not isinstance(kind, str) or not kind:
        return f"type {_clip(kind)}"
    if kind == "text":
        if not isinstance(obj.get("text"), str):
            return f"text {_clip(obj.get('text'))}"
    elif kind == "tool_use":
        for key in ("id", "name"):
            if not isinstance(obj.get(key), str) or not obj.get(key):
                return f"tool_use {key} {_clip(obj.get(key))}"
        if not isinstance(obj.get("input"), dict):
            return f"tool_use input {_clip(obj.get('input'))}"
    elif kind == "thinking":
        if not isinstance(obj.get("thinking"), str):
            return f"thinking {_clip(obj.get('thinking'))}"
        if not streamed and not isinstance(obj.get("signature"), str):
            return f"thinking signature {_clip(obj.get('signature'))}"
    elif kind == "redacted_thinking":
        if not isinstance(obj.get("data"), str):
            return f"redacted_thinking data {_clip(obj.get('data'))}"
    return None


def delta_problem(value: dict[str, Any]) -> str | None:
    delta = value.get("delta")
    if not isinstance(delta, dict):
        return f"delta {_clip(delta)}"
    reason = delta.get("stop_reason")
    if reason not in ev.STOP_REASONS:
        return f"stop_reason {_clip(reason)}"
    usage = value.get("usage")
    tokens = usage.get("output_tokens") if isinstance(usage, dict) else None
    if not isinstance(tokens, int) or isinstance(tokens, bool) or tokens < 0:
        return f"usage {_clip(usage)}"
    return None


def from_message(body: Any) -> Answer:
    """The answer a non-stream message object gives."""
    a = Answer(message=body, streamed=False, delta_seen=True)
    if not isinstance(body, dict):
        return a
    a.stop_reason, a.stop_sequence = body.get("stop_reason"), body.get("stop_sequence")
    a.start_usage = body.get("usage")
    content = body.get("content")
    for index, obj in enumerate(content if isinstance(content, list) else []):
        block = Block(index, state="stopped", start=obj, streamed=False)
        if isinstance(obj, dict):
            block.type = str(obj.get("type", ""))
            block.id, block.name, block.given_input = obj.get("id"), obj.get("name"), obj.get("input")
            text = obj.get("thinking") if block.type == "thinking" else obj.get("text")
            block.pieces = [text] if isinstance(text, str) and text else []
            signature = obj.get("signature")
            block.signature_pieces = [signature] if isinstance(signature, str) and signature else []
        a.blocks[index] = block
    return a


def decode_and_assemble(pieces: Iterable[bytes], max_events: int | None = None, watch: Any = None,
                        ) -> tuple[list[SSEEvent], SSEStats, list[Event], Assembler]:
    """Decode an SSE body delivered in pieces and assemble its events, in one pass."""
    return Assembler.decode(pieces, max_events, watch)


def _clip(value: Any, limit: int = 60) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"
