"""The Responses API's events assembled, in one pass, into the answer a correct client builds, with the
event order judged as it goes.

Theory of operation. ``Assembler.feed`` takes one classified event at a time and keeps only state:
the lifecycle state, one state per output item and per content part, the joined deltas, the last
``sequence_number``, and the first few violations of each order rule (``Violation``, carrying its rule
id). Nothing is re-walked after the stream ends; ``close`` adds what only the end can show (an item
never done, no terminal event, the terminal response disagreeing with what the stream built).

The order rules are three small transition tables, in the spirit of h11's ``_state.py``:
``LIFECYCLE`` (the response), ``ITEM`` (an output item) and ``PART`` (a content part of a message).
A pair missing from a table is a violation of the rule that table's ``*_RULE`` names.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from conformance.protocols.event_assembler import MAX_VIOLATIONS as MAX_VIOLATIONS
from conformance.protocols.event_assembler import EventAssembler, joined
from conformance.protocols.event_assembler import Violation as Violation
from conformance.protocols.responses import payloads as ev
from conformance.protocols.responses.payloads import Event, classify
from conformance.wire.sse import SSEEvent, SSEStats

# -- the tables: (state, event class) -> next state ------------------------------------------------------
# event classes: created (or queued), progress, item (an event of an output item), terminal, error, done, other
LIFECYCLE: dict[tuple[str, str], str] = {
    ("start", "created"): "open",
    ("open", "created"): "open",  # response.queued then response.created
    ("open", "progress"): "open",
    ("open", "item"): "open",
    ("open", "error"): "open",
    ("open", "other"): "open",
    ("open", "terminal"): "ended",
    ("ended", "done"): "closed",
}
LIFECYCLE_RULE = {"start": "RSP-001", "open": "RSP-002", "ended": "RSP-002", "closed": "RSP-002"}

ITEM: dict[tuple[str, str], str] = {
    ("none", "added"): "open",
    ("open", "event"): "open",
    ("open", "done"): "done",
}
ITEM_RULE = "RSP-007"

PART: dict[tuple[str, str], str] = {
    ("none", "added"): "open",
    ("open", "delta"): "open",
    ("open", "text_done"): "open",
    ("open", "done"): "done",
}
PART_RULE = "RSP-008"

STATE_WORDS = {"none": "never added", "open": "already added", "done": "already done"}
PART_EVENTS = {ev.PART_ADDED: "added", ev.TEXT_DELTA: "delta", ev.REFUSAL_DELTA: "delta", ev.TEXT_DONE: "text_done",
               ev.REFUSAL_DONE: "text_done", ev.PART_DONE: "done"}



@dataclass(slots=True)
class Part:
    state: str = "none"
    type: str = "output_text"
    pieces: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        return joined(self.pieces)


@dataclass(slots=True)
class Item:
    """One output item as the stream built it."""

    output_index: int
    id: Any = None
    type: str = ""
    state: str = "none"
    status: Any = None
    name: Any = None
    call_id: Any = None
    arguments_pieces: list[str] = field(default_factory=list)
    parts: dict[int, Part] = field(default_factory=dict)
    reasoning_pieces: list[str] = field(default_factory=list)
    summary_pieces: list[str] = field(default_factory=list)
    done_item: Any = None  # the item object output_item.done carried

    @property
    def arguments(self) -> str:
        return joined(self.arguments_pieces)

    @property
    def reasoning(self) -> str:
        return joined(self.reasoning_pieces)

    @property
    def summary(self) -> str:
        return joined(self.summary_pieces)

    @property
    def text(self) -> str:
        return "".join(p.text for i, p in sorted(self.parts.items()) if p.type == "output_text")

    @property
    def refusal(self) -> str:
        return "".join(p.text for i, p in sorted(self.parts.items()) if p.type == "refusal")

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.type, "id": self.id, "status": self.status}
        if self.type == "function_call":
            out.update(name=self.name, call_id=self.call_id, arguments=self.arguments)
        elif self.type == "reasoning":
            out.update(text=self.reasoning, summary=self.summary)
        else:
            out.update(text=self.text)
            if self.refusal:
                out["refusal"] = self.refusal
        return out


@dataclass(slots=True)
class Answer:
    """What a correct client makes of a whole Responses answer (streamed or not)."""

    items: dict[int, Item] = field(default_factory=dict)
    response: Any = None  # the terminal event's (or the JSON body's) response object
    terminal: str | None = None  # the terminal event's type (completed / incomplete / failed)
    terminals: int = 0
    first_type: str | None = None
    created: Any = None  # response.created's response object
    errors: list[Any] = field(default_factory=list)  # error events' payloads
    done: bool = False  # data: [DONE] seen
    done_end: int | None = None
    events: int = 0
    unknown_types: dict[str, int] = field(default_factory=dict)  # event types this suite does not know
    event_name_missing: int = 0  # events sent without an event: field
    first_unnamed: int | None = None  # the first of them
    first_of: dict[str, int] = field(default_factory=dict)  # the first event of each type (the first 64 types)
    deltas: int = 0  # events whose type ends in .delta
    violations: list[Violation] = field(default_factory=list)
    violation_counts: dict[str, int] = field(default_factory=dict)

    @property
    def status(self) -> Any:
        return self.response.get("status") if isinstance(self.response, dict) else None

    @property
    def text(self) -> str:
        return "".join(i.text for _, i in sorted(self.items.items()) if i.type == "message")

    @property
    def reasoning(self) -> str:
        return "".join(i.reasoning + i.summary for _, i in sorted(self.items.items()) if i.type == "reasoning")

    @property
    def calls(self) -> list[Item]:
        return [i for _, i in sorted(self.items.items()) if i.type == "function_call"]

    @property
    def usage(self) -> Any:
        return self.response.get("usage") if isinstance(self.response, dict) else None

    @property
    def error(self) -> Any:
        if self.errors:
            return self.errors[0]
        return self.response.get("error") if isinstance(self.response, dict) else None

    @property
    def incomplete_reason(self) -> Any:
        details = self.response.get("incomplete_details") if isinstance(self.response, dict) else None
        return details.get("reason") if isinstance(details, dict) else None

    def to_json(self) -> dict[str, Any]:
        return {"status": self.status, "text": self.text, "reasoning": self.reasoning,
                "items": [i.to_json() for _, i in sorted(self.items.items())], "usage": self.usage,
                "error": self.error, "terminal": self.terminal, "incomplete_reason": self.incomplete_reason}


class Assembler(EventAssembler[Event], classify=classify, answer=Answer):
    """Feed events one at a time; the answer and the order violations build as they arrive."""

    answer: Answer
    lifecycle, lifecycle_rule, first = LIFECYCLE, LIFECYCLE_RULE, "response.created first"
    last_seq: int | None = None

    # -- feeding ---
    def feed(self, e: Event) -> None:
        a = self.answer
        a.events += 1
        self.enter(e)
        if a.first_type is None:
            a.first_type = e.type or e.kind
        kind = e.type
        if kind not in a.first_of and len(a.first_of) < 64:
            a.first_of[kind] = e.index
            self._mark()
        if kind.endswith(".delta"):
            a.deltas += 1
        if e.kind == "done":
            a.done = True
            self._step("done", e, "data: [DONE]")
            return
        if e.kind == "invalid":
            what = f"not JSON ({e.problem})" if e.problem else "not an object with a string type"
            self._violate("RSP-003", e.index, f"a payload that is {what}", "a JSON object with a string type")
            return
        value = e.value
        if e.sse_type != "message" and e.sse_type != e.type:
            self._violate("RSP-004", e.index, f"event: {e.sse_type} for a payload of type {e.type}",
                          "event: equal to the payload's type")
        elif e.sse_type == "message":
            a.event_name_missing += 1
            if a.first_unnamed is None:
                a.first_unnamed = e.index
                self._mark()
        self._sequence(e, value)
        kind = e.type
        if kind not in ev.KNOWN:
            if kind in a.unknown_types or len(a.unknown_types) < 64:  # the first 64 types a hostile stream names
                a.unknown_types[kind] = a.unknown_types.get(kind, 0) + 1
        if kind in (ev.CREATED, ev.QUEUED):
            if kind == ev.CREATED and a.created is None:
                a.created = value.get("response")
            self._step("created", e, kind)
        elif kind == ev.IN_PROGRESS:
            self._step("progress", e, kind)
        elif kind in ev.TERMINAL:
            a.terminals += 1
            if a.terminal is None:
                a.terminal, a.response = kind, value.get("response")
            self._step("terminal", e, kind)
        elif kind == ev.ERROR:
            if len(a.errors) < 16:  # the rules read the first; a flood of errors is kept bounded
                a.errors.append(value.get("error", value) if isinstance(value.get("error"), dict) else value)
            self._step("error", e, kind)
        elif isinstance(value.get("output_index"), int) or "item_id" in value or kind.startswith("response.output_item"):
            self._step("item", e, kind)
            self._item_event(e, kind, value)
        else:
            self._step("other", e, kind)

    def _off(self, rule: str, klass: str, e: Event, name: str) -> None:
        if self.state == "open" and klass == "done":
            self._violate(rule, e.index, "data: [DONE] before any terminal event",
                          "response.completed, response.incomplete or response.failed, then [DONE] if any")
            self.state = "closed"
        elif self.state == "ended" and klass == "terminal":
            self._violate(rule, e.index, f"a second terminal event ({name})", "exactly one terminal event")
        elif self.state == "ended":
            self._violate(rule, e.index, f"{name} after the terminal event",
                          "nothing after the terminal event but data: [DONE]")
        else:
            self._violate(rule, e.index, f"{name} after data: [DONE]", "nothing after data: [DONE]")

    def _sequence(self, e: Event, value: dict[str, Any]) -> None:
        seq = value.get("sequence_number")
        if not isinstance(seq, int) or isinstance(seq, bool):
            self._violate("RSP-006", e.index, f"sequence_number {json.dumps(seq)[:40]} on {e.type}",
                          "an integer sequence_number on every event")
            return
        if self.last_seq is not None and seq <= self.last_seq:
            self._violate("RSP-006", e.index, f"sequence_number {seq} after {self.last_seq}",
                          "sequence numbers strictly increasing")
        self.last_seq = seq

    def _item_event(self, e: Event, kind: str, value: dict[str, Any]) -> None:
        index = value.get("output_index")
        if not isinstance(index, int) or isinstance(index, bool):
            self._violate(ITEM_RULE, e.index, f"{kind} without an integer output_index", "output_index on every item event")
            return
        item = self.answer.items.get(index)
        klass = "added" if kind == ev.ITEM_ADDED else "done" if kind == ev.ITEM_DONE else "event"
        state = item.state if item is not None else "none"
        nxt = self._move(ITEM, ITEM_RULE, state, klass, e, f"{kind} for output_index {index}, an item",
                         "output_item.added, then the item's events, then output_item.done")
        if nxt is None:
            if item is None:
                if klass != "added":
                    return
            elif state == "done":
                return
        if item is None:
            item = self.answer.items[index] = Item(index)
        if klass == "added":
            raw = value.get("item")
            obj: dict[str, Any] = raw if isinstance(raw, dict) else {}
            item.id, item.type, item.status = obj.get("id"), str(obj.get("type", "")), obj.get("status")
            item.name, item.call_id = obj.get("name"), obj.get("call_id")
            item.state = "open"
            return
        item_id = value.get("item_id")
        if item_id is not None and item.id is not None and item_id != item.id:
            self._violate(ITEM_RULE, e.index, f"{kind} with item_id {json.dumps(item_id)[:40]} at output_index {index}",
                          f"the item_id its output_item.added gave ({json.dumps(item.id)[:40]})")
        if klass == "done":
            self._item_done(e, item, value.get("item"))
            return
        if kind in PART_EVENTS:
            self._part_event(e, item, kind, value)
        elif kind == ev.ARGS_DELTA:
            item.arguments_pieces.append(value["delta"] if isinstance(value.get("delta"), str) else "")
        elif kind == ev.ARGS_DONE:
            self._same(e, "RSP-009", kind, value.get("arguments"), item.arguments, "arguments")
        elif kind == ev.REASONING_DELTA:
            item.reasoning_pieces.append(value["delta"] if isinstance(value.get("delta"), str) else "")
        elif kind == ev.REASONING_DONE:
            self._same(e, "RSP-009", kind, value.get("text"), item.reasoning, "text")
        elif kind == ev.SUMMARY_DELTA:
            item.summary_pieces.append(value["delta"] if isinstance(value.get("delta"), str) else "")

    def _part_event(self, e: Event, item: Item, kind: str, value: dict[str, Any]) -> None:
        index = value.get("content_index")
        if not isinstance(index, int) or isinstance(index, bool):
            self._violate(PART_RULE, e.index, f"{kind} without an integer content_index",
                          "content_index on every content event")
            return
        part = item.parts.get(index)
        klass = PART_EVENTS[kind]
        state = part.state if part is not None else "none"
        nxt = self._move(PART, PART_RULE, state, klass, e, f"{kind} for content_index {index}, a part",
                         "content_part.added, the part's deltas and .done, then content_part.done")
        if nxt is None:
            if state == "done" or (part is None and klass != "delta"):
                return
        if part is None:
            part = item.parts[index] = Part()
        if klass == "added":
            obj = value.get("part")
            part.type = str(obj.get("type", "output_text")) if isinstance(obj, dict) else "output_text"
        elif klass == "delta":
            part.type = "refusal" if kind == ev.REFUSAL_DELTA else part.type
            part.pieces.append(value["delta"] if isinstance(value.get("delta"), str) else "")
        elif klass == "text_done":
            self._same(e, "RSP-009", kind, value.get("refusal" if kind == ev.REFUSAL_DONE else "text"), part.text,
                       "text")
        elif klass == "done":
            done_part = value.get("part")
            if isinstance(done_part, dict):  # a reasoning item's reasoning_text part: its text came in reasoning deltas
                self._same(e, "RSP-009", kind, done_part.get("refusal" if part.type == "refusal" else "text"),
                           item.reasoning if part.type == "reasoning_text" else part.text, "part.text")
        part.state = nxt or part.state

    def _item_done(self, e: Event, item: Item, obj: Any) -> None:
        item.state = "done"
        item.done_item = obj
        if not isinstance(obj, dict):
            return
        item.status = obj.get("status", item.status)
        if item.type == "function_call":
            self._same(e, "RSP-009", ev.ITEM_DONE, obj.get("arguments"), item.arguments, "item.arguments")
        elif item.type == "message":
            for i, part in sorted(item.parts.items()):
                if part.state == "open":
                    self._violate(PART_RULE, e.index, f"output_item.done with content_index {i} still open",
                                  "content_part.done before output_item.done")
            content = obj.get("content")
            if isinstance(content, list):
                got = "".join(c.get("text", "") for c in content if isinstance(c, dict) and c.get("type") == "output_text"
                              and isinstance(c.get("text"), str))
                self._same(e, "RSP-009", ev.ITEM_DONE, got, item.text, "item.content text")

    def _move(self, table: dict[tuple[str, str], str], rule: str, state: str, klass: str, e: Event, subject: str,
              expected: str) -> str | None:
        """The next state from ``table``, or None after recording the violation a missing pair is."""
        nxt = table.get((state, klass))
        if nxt is None:
            self._violate(rule, e.index, f"{subject} {STATE_WORDS[state]}", expected)
        return nxt

    def _same(self, e: Event, rule: str, kind: str, got: Any, joined: str, what: str) -> None:
        if got is None:
            return  # an absent copy is judged by the event's shape, not as a disagreement
        if got != joined:
            self._violate(rule, e.index, f"{kind} {what} {_clip(got)}", f"the joined deltas {_clip(joined)}")

    # -- the end ---------------------------------------------------------------------------------------
    def close(self, complete: bool = True) -> Answer:
        """What the end shows; ``complete`` is False when the client stopped reading (nothing is missing then)."""
        a = self.answer
        if not complete:
            return a
        if a.terminals == 0 and a.events:
            self._violate("RSP-002", None, "a stream that ends without a terminal event",
                          "response.completed, response.incomplete or response.failed last")
        if a.terminal in (ev.COMPLETED, ev.INCOMPLETE):
            for index, item in sorted(a.items.items()):
                if item.state == "open":
                    self._violate("RSP-010", None, f"output_index {index} ({item.type}) added and never done",
                                  "output_item.done for every item before the terminal event")
        if a.terminal is not None:
            check_terminal(self, a)
        return a


def check_terminal(asm: Assembler, a: Answer) -> None:
    """The terminal event's response object: its status names the event; its output is what the stream built."""
    response = a.response
    if not isinstance(response, dict):
        asm._violate("RSP-011", None, f"{a.terminal} without a response object", "the final response object")
        return
    want = ev.TERMINAL_STATUS[a.terminal or ""]
    if response.get("status") != want:
        asm._violate("RSP-011", None, f"{a.terminal} with status {json.dumps(response.get('status'))[:40]}",
                     f"status {want!r}")
    if a.terminal == ev.INCOMPLETE and not isinstance(a.incomplete_reason, str):
        asm._violate("RSP-011", None, "response.incomplete without incomplete_details.reason",
                     "incomplete_details: {reason: max_output_tokens | content_filter}")
    output = response.get("output")
    if not isinstance(output, list):
        asm._violate("RSP-012", None, "a final response without an output array", "output: the items the stream built")
        return
    built = [i for _, i in sorted(a.items.items())]
    final = [x for x in output if isinstance(x, dict)]
    if len(final) != len(built):
        asm._violate("RSP-012", None, f"{len(final)} output item(s) in the final response",
                     f"the {len(built)} item(s) the stream built")
        return
    for item, obj in zip(built, final, strict=True):
        got = item_summary(obj)
        want_item = {k: v for k, v in item.to_json().items() if k in got}
        if got != want_item:
            asm._violate("RSP-012", None, f"final output item {_clip(got)}", f"the streamed item {_clip(want_item)}")
            return


def item_summary(obj: dict[str, Any]) -> dict[str, Any]:
    """The parts of an output item the stream's assembly is compared on (the type, the id, text, call)."""
    kind = obj.get("type")
    out: dict[str, Any] = {"type": kind, "id": obj.get("id")}
    if kind == "function_call":
        out.update(name=obj.get("name"), call_id=obj.get("call_id"), arguments=obj.get("arguments"))
    elif kind == "message":
        content = _list(obj.get("content"))
        out["text"] = "".join(c.get("text", "") for c in content
                              if isinstance(c, dict) and c.get("type") == "output_text" and isinstance(c.get("text"), str))
    return out


def from_response(body: Any) -> Answer:
    """The answer a non-stream response object gives."""
    a = Answer(response=body)
    output = body.get("output") if isinstance(body, dict) else None
    for index, obj in enumerate(output if isinstance(output, list) else []):
        if not isinstance(obj, dict):
            continue
        arguments = obj.get("arguments")
        item = Item(index, obj.get("id"), str(obj.get("type", "")), "done", obj.get("status"), obj.get("name"),
                    obj.get("call_id"), [arguments] if isinstance(arguments, str) and arguments else [])
        for i, part in enumerate(_list(obj.get("content"))):
            if isinstance(part, dict):
                kind = str(part.get("type", ""))
                text = part.get("refusal" if kind == "refusal" else "text")
                item.parts[i] = Part("done", "refusal" if kind == "refusal" else
                                     "output_text" if kind == "output_text" else kind,
                                     [text] if isinstance(text, str) and text else [])
        if item.type == "reasoning":
            item.reasoning_pieces = [p.text for p in item.parts.values()]
            item.parts = {}
            item.summary_pieces = [s["text"] for s in _list(obj.get("summary")) if isinstance(s, dict)
                                   and isinstance(s.get("text"), str)]
        a.items[index] = item
    return a


def decode_and_assemble(pieces: Iterable[bytes], max_events: int | None = None, watch: Any = None,
                        ) -> tuple[list[SSEEvent], SSEStats, list[Event], Assembler]:
    """Decode an SSE body delivered in pieces and assemble its events, in one pass."""
    return Assembler.decode(pieces, max_events, watch)


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _clip(value: Any, limit: int = 60) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    text = json.dumps(text, ensure_ascii=False) if isinstance(value, str) else text
    return text if len(text) <= limit else text[: limit - 1] + "…"
