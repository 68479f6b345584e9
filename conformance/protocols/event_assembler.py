"""What every SSE protocol's assembler shares: the one pass that decodes a stream and feeds each classified event to
the assembler and the generic SSE view (``EventWatch``), and the bookkeeping of order violations (the first few of
each rule, with a count of the rest, each naming the event it was found at). A protocol's assembler subclasses
``EventAssembler``, gives ``classify`` and ``feed`` and keeps its own state; none imports another protocol's.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from conformance.wire.sse import SSEEvent, SSEStats

MAX_VIOLATIONS = 3  # kept per rule (with a count of the rest): enough for a report, bounded for any stream
UNSAFE_IN_STRING = re.compile(r'[\x00-\x1f"\\]')  # what a JSON string literal holds only escaped, or ends it
_KEYS: dict[str, re.Pattern[str]] = {}


def template_around(data: str, key: str, text: str) -> tuple[str, str] | None:
    """An event's data around its text: (what precedes the text's string literal, what follows it), when the text is
    written as itself (no escapes) as the value of the one ``key`` the data names; else None. Any data that is that
    prefix, a string literal without quotes, backslashes or control characters, and that suffix is the same JSON
    document but for the text (the template path of ``EventAssembler.feed_events``)."""
    if UNSAFE_IN_STRING.search(text) or data.count(f'"{key}"') != 1:
        return None
    pattern = _KEYS.get(key)
    if pattern is None:
        pattern = _KEYS[key] = re.compile(re.escape(f'"{key}"') + r"\s*:\s*")
    found = pattern.search(data)
    if found is None or not data.startswith(f'"{text}"', found.end()):
        return None
    return data[:found.end()], data[found.end() + len(text) + 2:]


@dataclass(frozen=True, slots=True)
class Violation:
    rule: str
    event: int | None  # the event index (None: the stream's end)
    received: str
    expected: str


class Payload(Protocol):
    """What a protocol's ``classify`` makes of an event: it names the event and where it was, and a problem when
    its data is not what the protocol frames (for SSE-006)."""

    @property
    def index(self) -> int: ...

    @property
    def offset(self) -> int: ...

    @property
    def problem(self) -> str | None: ...


class Violations(Protocol):
    """The part of a protocol's answer the bookkeeping writes."""

    violations: list[Violation]
    violation_counts: dict[str, int]


E = TypeVar("E", bound=Payload)


def joined(pieces: list[str]) -> str:
    """Text built from deltas: appended as pieces (O(1) each: a str attribute's += copies the whole text every time),
    joined when read and kept joined."""
    if len(pieces) > 1:
        pieces[:] = ["".join(pieces)]
    return pieces[0] if pieces else ""


class EventAssembler(Generic[E]):
    """Feed events one at a time; the subclass's answer and its order violations build as they arrive."""

    classify: Callable[[SSEEvent], E]  # the protocol's payload decoder (a staticmethod of the subclass)
    new_answer: Callable[[], Violations]  # the protocol's answer, empty (its class)
    answer: Violations

    def __init_subclass__(cls, classify: Callable[[SSEEvent], E] | None = None,
                          answer: Callable[[], Violations] | None = None, **kwargs: Any) -> None:
        """A protocol's assembler names its payload decoder and its answer's class: ``class Assembler(
        EventAssembler[Event], classify=classify, answer=Answer)``."""
        super().__init_subclass__(**kwargs)
        if classify is not None:
            cls.classify = staticmethod(classify)
        if answer is not None:
            cls.new_answer = answer

    def __init__(self, keep_events: bool = True) -> None:
        self.keep = keep_events
        self.answer = self.new_answer()
        self.state = "start"
        self._at: tuple[int, int] = (-1, 0)  # the event being fed: its index and offset
        self.payloads: list[E] = []
        self.watch: Any = None  # an EventWatch fed every event and payload in this pass (protocols/event_watch.py)
        self.violated = 0  # order violations so far (every one, counted or kept)
        # the template path (with a watch): (SSE event type, prefix, suffix) of the last event, when every event
        # equal to it but for its text is judged as it was (``settled``): such an event is only counted (``repeat``)
        self._template: tuple[str, str, str] | None = None

    def feed_events(self, events: Iterable[SSEEvent]) -> None:
        watch, classify = self.watch, type(self).classify
        template = self._template
        unsafe = UNSAFE_IN_STRING.search
        for event in events:
            if template is not None:
                sse_type, prefix, suffix = template
                data = event.data
                left, right = len(prefix), len(data) - len(suffix)
                if right - left >= 2 and event.type == sse_type and event.data_lines == 1 and data[left] == '"' \
                        and data[right - 1] == '"' and data.startswith(prefix) and data.endswith(suffix) \
                        and not unsafe(data, left + 1, right - 1):
                    watch.event(event.index, event.offset, event.end, sse_type, 1)
                    self.repeat(event.index, event.offset, data[left + 1:right - 1])
                    continue
                template = None
            e = classify(event)
            if watch is not None:
                watch.event(event.index, event.offset, event.end, event.type, event.data_lines)
                watch.problem(e)
                before = self.violated
                self.feed(e)
                found = self.settled(e) if self.violated == before and event.data_lines == 1 else None
                if found is not None:
                    around = template_around(event.data, *found)
                    template = (event.type, *around) if around is not None else None
                continue
            self.feed(e)
        self._template = template

    def settled(self, e: E) -> tuple[str, str] | None:
        """(the key whose string value is this event's text, the text), when the event just fed, violating nothing,
        leaves the assembler in a state where an event equal to it but for the text would only add the text and
        move the counters (``repeat``); None (the default) for every other event."""
        return None

    def repeat(self, index: int, offset: int, text: str) -> None:
        """An event equal to the last one fed but for its text: what ``feed`` would do with it."""
        raise NotImplementedError

    def feed(self, e: E) -> None:
        """One classified event (the subclass's; it begins with ``enter``)."""
        raise NotImplementedError

    def enter(self, e: E) -> None:
        """The event being fed: where it is (for the findings that name it), and kept when events are kept."""
        self._at = (e.index, e.offset)
        if self.keep:
            self.payloads.append(e)

    # the stream's lifecycle, a transition table: (state, event class) -> the next state; a pair missing from it
    # violates the rule ``lifecycle_rule`` names for the state; ``first`` is what the stream must begin with
    lifecycle: dict[tuple[str, str], str] = {}
    lifecycle_rule: dict[str, str] = {}
    first = ""

    def _step(self, klass: str, e: Any, name: str) -> None:
        """One event of class ``klass`` along the lifecycle; an event before the first is a violation, and the
        stream is judged from there on as if it had begun; any other missing pair is ``_off``'s to word."""
        nxt = self.lifecycle.get((self.state, klass))
        if nxt is not None:
            self.state = nxt
            return
        rule = self.lifecycle_rule[self.state]
        if self.state == "start":
            self._violate(rule, e.index, f"{name} first", self.first)
            self.state = "open"
            self._step(klass, e, name)
        else:
            self._off(rule, klass, e, name)

    def _off(self, rule: str, klass: str, e: Any, name: str) -> None:
        """An event of class ``klass`` the lifecycle has no pair for, past the start: the protocol's own words."""
        self._violate(rule, e.index, f"{name} in state {self.state}", "the protocol's order")

    def _violate(self, rule: str, event: int | None, received: str, expected: str) -> None:
        self.violated += 1
        counts = self.answer.violation_counts
        counts[rule] = counts.get(rule, 0) + 1
        if counts[rule] <= MAX_VIOLATIONS:
            self.answer.violations.append(Violation(rule, event, received, expected))
            if event is not None and event == self._at[0]:
                self._mark()

    def _mark(self) -> None:
        """Keep the current event's offset for a finding that names it (the events themselves are not kept)."""
        if self.watch is not None:
            self.watch.at[self._at[0]] = self._at[1]

    @classmethod
    def decode(cls, pieces: Iterable[bytes], max_events: int | None = None, watch: Any = None,
               ) -> tuple[list[SSEEvent], SSEStats, list[E], Any]:
        """Decode an SSE body delivered in pieces and assemble its events, in one pass. With a watch, the streaming
        judge: no event or payload is kept."""
        from conformance.protocols import feed_sse

        asm = cls(keep_events=watch is None)
        asm.watch = watch
        events, stats = feed_sse(pieces, asm.feed_events, max_events, keep=watch is None)
        return events, stats, asm.payloads, asm


def analyze_events(a: Any, pieces: Iterable[bytes], decode_and_assemble: Callable[..., Any],
                   from_whole: Callable[[Any], Any]) -> None:
    """An event protocol's ``analyze``: its stream decoded and assembled in one pass, judged whole with a generic
    ``EventWatch`` (no event kept), or its JSON body read into the same answer (``from_whole``)."""
    import json

    from conformance.protocols.event_watch import EventWatch
    from conformance.wire.body import whole

    if a.format == "sse":
        a.watch = EventWatch()
        a.events, a.stats, a.payloads, asm = decode_and_assemble(pieces, watch=a.watch)
        if a.stats.total_bytes < len(a.exchange.body):
            a.judged_bytes = a.stats.total_bytes
        a.answer = asm.close()
    elif a.format == "json":
        a.json_body = json.loads(whole(a.exchange.body).decode("utf-8"))
        a.answer = from_whole(a.json_body)


def tokens_of(answer: Any, key: str) -> tuple[int, int]:
    """(completion tokens the answer's usage reports under ``key``, 0), else (its text deltas, 1: a count of events)."""
    usage = answer.usage
    if isinstance(usage, dict) and isinstance(usage.get(key), int):
        return usage[key], 0
    return answer.deltas, 1
