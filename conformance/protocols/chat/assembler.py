"""The Chat Completions assembler: classified payloads merged into one message per choice.

Invariant: any list of SSE events (or any JSON body) yields an ``Assembled`` value; never an
exception.

Theory of operation. Chunks are merged per choice: content and the three reasoning carriers of
../shared/seeds/003 §4 (``reasoning_content``, ``reasoning``, inline ``<think>``), refusal, and
tool calls by ``index`` (003 §3.3: "keep the first non-null id, type ... append every
function.arguments fragment"; names are appended too, because "Names can be split across
pieces"). The end of the ``[DONE]`` event is kept, for the rule on bytes after it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from conformance.protocols.chat.payloads import (
    DONE,
    PROFILE_KEYS,
    THINK_CLOSE,
    THINK_OPEN,
    Payload,
    classify,
    error_object,
    fast_loads,
)
from conformance.protocols.event_assembler import UNSAFE_IN_STRING, template_around
from conformance.wire.sse import SSEEvent, SSERun, SSEStats


class ThinkSplitter:
    """Splits inline ``<think>…</think>`` out of content; markers may be cut anywhere (seed 003 §4: ``a<thi`` then
    ``nk>b</think>c`` is answer ``ac``, reasoning ``b``). In structured output (``literal_after_text``) a reasoning
    block can only come before the answer: once answer text has begun, ``<think>`` is the JSON's own text (a key or a
    string may hold it), never a carrier."""

    def __init__(self, literal_after_text: bool = False) -> None:
        self.inside = False
        self.seen = False
        self.pending = ""
        self.parts: list[tuple[bool, str]] = []  # (is_reasoning, text)
        self.literal_after_text = literal_after_text
        self.answered = False  # answer text (not whitespace) has been emitted

    def feed(self, text: str) -> None:
        if self.pending:
            text, self.pending = self.pending + text, ""
        elif "<" not in text:
            self._emit(text)
            return
        while text:
            if self.literal_after_text and self.answered and not self.inside:
                self._emit(text)  # the answer has begun: the rest of the structured output is text
                return
            marker = THINK_CLOSE if self.inside else THINK_OPEN
            at = text.find(marker)
            if at >= 0:
                self._emit(text[:at])
                if self.literal_after_text and self.answered and not self.inside:
                    continue  # the marker is inside the JSON: the top of the loop emits it as text
                self.inside = not self.inside
                self.seen = True
                text = text[at + len(marker) :]
                continue
            keep = partial_marker(text, marker)
            self._emit(text[: len(text) - keep])
            self.pending = text[len(text) - keep :]
            return

    def close(self) -> None:
        """An unfinished marker at the very end is text (003 §4)."""
        self._emit(self.pending)
        self.pending = ""

    def _emit(self, text: str) -> None:
        if text:
            self.parts.append((self.inside, text))
            if not self.inside and not self.answered and text.strip():
                self.answered = True


def partial_marker(text: str, marker: str) -> int:
    """Length of the longest end of ``text`` that could begin ``marker``."""
    for size in range(min(len(marker) - 1, len(text)), 0, -1):
        if marker.startswith(text[-size:]):
            return size
    return 0


@dataclass(slots=True)
class ToolCall:
    """One assembled tool call."""

    index: int
    id: str | None = None
    type: str | None = None
    name: str | None = None
    arguments: str = ""
    first_name: str | None = None  # the first non-null name piece (seed 000 keeps it; 003 appends pieces)

    def to_json(self) -> dict[str, Any]:
        return {"index": self.index, "id": self.id, "type": self.type, "name": self.name,
                "arguments": self.arguments}


COMPACT_AT = 512  # pieces of text a choice keeps apart before joining them
FOLD_AT = 1 << 16  # characters of content a choice keeps in pieces before folding them into its text


def _compacted(parts: list[tuple[bool, str]]) -> list[tuple[bool, str]]:
    """The think splitter's parts with each run of the same kind joined into one (the text and its order kept)."""
    out: list[tuple[bool, list[str]]] = []
    for is_reasoning, text in parts:
        if out and out[-1][0] == is_reasoning:
            out[-1][1].append(text)
        else:
            out.append((is_reasoning, [text]))
    return [(is_reasoning, "".join(texts)) for is_reasoning, texts in out]


@dataclass(slots=True)
class Choice:
    """The assembly of one choice."""

    index: int
    role: str | None = None
    # the content deltas as sent: the text folded so far and the pieces since (at most COMPACT_AT, FOLD_AT characters)
    raw_text: str = ""
    raw_parts: list[str] = field(default_factory=list)
    pending: int = field(default=0, repr=False, compare=False)  # the characters in raw_parts
    reasoning_parts: list[str] = field(default_factory=list)
    carriers: list[str] = field(default_factory=list)
    refusal: str | None = None
    tool_calls: dict[int, ToolCall] = field(default_factory=dict)
    finish_reason: str | None = None
    think: ThinkSplitter = field(default_factory=ThinkSplitter)
    # whether the think splitter holds the content: until a piece needs splitting (a "<"), the content is the raw
    # content and is kept once, in raw_parts
    split: bool = field(default=False, repr=False, compare=False)
    # the joined split content, and how many of think.parts it joined: the rules read content many times
    joined: tuple[int, str] = field(default=(0, ""), repr=False, compare=False)
    # how many of think.parts are already joined runs (only the parts after them are joined next)
    think_base: int = field(default=0, repr=False, compare=False)

    @property
    def raw_content(self) -> str:
        """The content deltas as sent, think markup included (folded once, and kept folded)."""
        if self.raw_parts:
            self._fold()
        return self.raw_text

    def _fold(self) -> None:
        """The pending pieces onto the text so far. The text is taken out of the choice while it grows, so that
        CPython, holding its only reference, grows it in place: a long answer is not copied whole, and judging never
        holds it twice."""
        run = "".join(self.raw_parts)
        self.raw_parts.clear()
        self.pending = 0
        text = self.raw_text
        self.raw_text = ""
        text += run
        self.raw_text = text

    @property
    def content(self) -> str:
        if not self.split:
            return self.raw_content
        parts = self.think.parts
        if self.joined[0] != len(parts):
            self.joined = (len(parts), "".join(text for is_reasoning, text in parts if not is_reasoning))
        return self.joined[1]

    @property
    def reasoning(self) -> str:
        return "".join(self.reasoning_parts)

    def add_reasoning(self, carrier: str, text: str) -> None:
        if carrier not in self.carriers:
            self.carriers.append(carrier)
        self.reasoning_parts.append(text)
        if len(self.reasoning_parts) > COMPACT_AT:
            self.reasoning_parts[:] = ["".join(self.reasoning_parts)]  # (rare: reasoning on a carrier field)

    def add_content(self, text: str) -> None:
        raw = self.raw_parts
        raw.append(text)
        self.pending += len(text)
        think = self.think
        # a string per token costs ~60 bytes beside its text, and pieces joined beside the text they join would hold
        # them twice: fold them into the text, every COMPACT_AT pieces or FOLD_AT characters
        if len(raw) > COMPACT_AT or self.pending > FOLD_AT:
            self._fold()
            if self.split:
                think.parts[self.think_base:] = _compacted(think.parts[self.think_base:])
                self.think_base = len(think.parts)
                self.joined = (-1, "")
        if not think.inside and not think.pending and "<" not in text:
            if self.split:
                think.parts.append((False, text))  # plain answer text: nothing to split
            return
        if not self.split:  # the first piece to split: the text before it, all plain, is the splitter's first part
            self.split = True
            prior = self.raw_text + "".join(raw[:-1])
            think.parts[:] = [(False, prior)] if prior else []
        before = len(self.think.parts)
        self.think.feed(text)
        self._collect_think(before)

    def finish_content(self) -> None:
        before = len(self.think.parts)
        self.think.close()
        self._collect_think(before)

    def _collect_think(self, before: int) -> None:
        for is_reasoning, text in self.think.parts[before:]:
            if is_reasoning:
                self.add_reasoning("think", text)

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "content": self.content,
            "reasoning": self.reasoning,
            "refusal": self.refusal,
            "tool_calls": [self.tool_calls[i].to_json() for i in sorted(self.tool_calls)],
            "finish_reason": self.finish_reason,
        }


@dataclass(slots=True)
class Assembled:
    """What a correct client makes of a whole response."""

    choices: dict[int, Choice] = field(default_factory=dict)
    usage: Any = None
    error: Any = None
    done: bool = False
    done_end: int | None = None  # where the [DONE] event's block ends in the body
    filtered: bool = False  # a content filter's verdict said filtered: true (Azure, 003 §3.7)
    structured: bool = False  # the request asked for JSON: <think> is a carrier only before the answer begins

    def choice(self, index: int = 0) -> Choice:
        if index not in self.choices:
            self.choices[index] = Choice(index, think=ThinkSplitter(self.structured))
        return self.choices[index]

    def to_json(self) -> dict[str, Any]:
        first = self.choices[min(self.choices)].to_json() if self.choices else Choice(0).to_json()
        first.pop("index")
        out: dict[str, Any] = {**first, "usage": self.usage, "error": self.error}
        if self.filtered:
            out["filtered"] = True
        if len(self.choices) > 1:
            out["choices"] = [self.choices[i].to_json() for i in sorted(self.choices)]
        return out


class Assembler:
    """Merges classified payloads into an ``Assembled`` message."""

    def __init__(self, watch: Any = None) -> None:
        self.result = Assembled()
        self.payloads: list[Payload] = []
        # with a ChatWatch (the streaming judge's state, fed every event and payload in this pass), no payload is
        # kept and a chunk that repeats the last one's bytes but for its text takes the template path below
        self.watch: Any = watch
        self._template: tuple[str, str] | None = None
        self._volatile = False  # the template leaves out the chunk's last key, flat numbers that change (timings)
        # the last item fed was a run counted at once: its data and text (a run that goes on from it is counted too)
        self._counted: tuple[str, str] | None = None

    def feed_events(self, events: Sequence[SSEEvent | SSERun]) -> None:
        """Classify and merge events. The commonest event, a chunk with one choice at index 0 whose
        delta is one piece of text, is merged inline; anything else takes ``classify`` and ``feed``.
        """
        keep = self.watch is None
        payloads = self.payloads
        fast = fast_loads
        first: Choice | None = None
        watch = self.watch
        template = self._template
        volatile = self._volatile
        unsafe = UNSAFE_IN_STRING.search
        chunks: list[tuple[int, int, int, str]] = []  # template-path chunks in a row, for the watch at once
        texts: list[str] = []  # and their texts, for the answer
        for event in events:
            if isinstance(event, SSERun):
                if chunks:
                    self._flush(chunks, texts)
                self._template = template
                self._run(event)
                template = self._template
                continue
            index, kind, data, _, offset, end, lines = event  # (one unpacking: cheaper than the attributes)
            if watch is not None:
                if template is not None and kind == "message":
                    prefix, suffix = template  # _templated, inline: once per chunk of most streams
                    # with volatile, the template was cut out of a chunk without its last key's flat numbers
                    probe = _volatile(_NOTHING, data, 1) if volatile else data
                    left, right = len(prefix), len(probe) - len(suffix)
                    if right - left >= 2 and probe[left] == '"' and probe[right - 1] == '"' \
                            and probe.startswith(prefix) and probe.endswith(suffix) \
                            and not unsafe(probe, left + 1, right - 1):
                        # the last chunk's bytes but for its text: the same chunk with this text
                        said = probe[left + 1:right - 1]
                        if lines == 1:
                            chunks.append((index, offset, end, said))
                            if said:
                                texts.append(said)
                            continue
                        if chunks:
                            self._flush(chunks, texts)
                        watch.event(index, offset, end, kind, lines)
                        watch.repeat(index, offset, said)
                        if said:
                            self.result.choice(0).add_content(said)
                        continue
                if chunks:
                    self._flush(chunks, texts)
                watch.event(index, offset, end, kind, lines)
                template, volatile = None, False
            if self.result.done_end is not None:  # after [DONE]: a correct client has stopped reading; the payload
                self._keep(classify(event))  # is judged (SSE-003), never merged into the answer
                continue
            if data == DONE:
                self.result.done_end = end
            if fast is not None and kind == "message" and data[:1] == "{":
                try:
                    value = fast(data.encode())  # orjson parses bytes three times faster than str
                except ValueError:
                    value = None
                text = _plain_text(value)
                if text is not None:
                    payload = Payload(index, offset, "chunk", value, "message")
                    role = len(value["choices"][0]["delta"]) == 2  # the role beside the text (_plain_text)
                    if keep:
                        payloads.append(payload)
                    else:
                        watch.payload(payload)
                        # a role on every chunk: the copies that follow are judged as this one once the watch has
                        # its first repeated role (CHK-009 names the first; later ones change no verdict)
                        template = _template_of(data, text, value) if not role or watch.role_problem else None
                        watch.template_role = role
                        volatile = False
                        if template is not None and _VOLATILE_KEY in template[1]:
                            # llama-server's timings, new numbers on every chunk: the template is the chunk
                            # without them (no rule reads their values; CHK-015 reads the key, on the envelope)
                            cut = _volatile(_NOTHING, data, 1)
                            template = _template_of(cut, text, value) if cut != data else None
                            volatile = template is not None
                    if first is None:
                        first = self.result.choice(0)
                    if role and first.role is None:
                        first.role = "assistant"
                    if text:
                        first.add_content(text)
                    continue
            self.feed(classify(event))
        if chunks:
            self._flush(chunks, texts)
        self._template = template
        self._volatile = volatile
        if events and not isinstance(events[-1], SSERun):
            self._counted = None

    def _flush(self, chunks: list[tuple[int, int, int, str]], texts: list[str]) -> None:
        """Hand the template-path chunks gathered to the watch, and their texts to the answer, and forget them."""
        self.watch.templated(chunks)
        if texts:  # one piece: the think splitter splits a marker cut anywhere, so the pieces joined split the same
            self.result.choice(0).add_content("".join(texts))
        chunks.clear()
        texts.clear()

    def _run(self, run: SSERun) -> None:
        """Copies of the event just fed (``SSEDecoder(runs=True)``). The first two are fed as events; when the second
        took the template path with text and left the watch as it found it but for the counters a copy moves
        (``ChatWatch.settled``), every later copy would do the same: they are counted at once (``ChatWatch.repeats``)
        and their text added in one piece. Otherwise each copy is fed as an event. A run that goes on from a run
        counted so (the next read of the same flood) is counted at once: its copies are more of the same."""
        counted, self._counted = self._counted, None
        if run.continued and counted is not None and counted[0] == run.event.data:
            self._count(run, run.copies, counted[1])
            return
        text = None
        self.feed_events(run.events(1, 1))
        if self._template is not None and self.result.done_end is None:
            text = _templated(run.event.data, self._template)
        if not text:  # not the template path, or no text: each copy as an event
            if self.watch is not None and classify(run.event).kind == "invalid" and run.copies > 2:
                # copies of a payload JSON refuses (a flood of empty events): once the second leaves the watch as it
                # found it but for the counters a copy moves, every later copy would too; counted at once
                before = self.watch.settled()
                self.feed_events(run.events(2, 2))
                if self.watch.settled() == before:
                    step = run.copies * run.step
                    self.watch.refused_repeats(run.copies - 2, run.event.index + run.copies,
                                               run.event.offset + step, run.event.end + step)
                    return
                self.feed_events(run.events(3))
                return
            self.feed_events(run.events(2))
            return
        before = self.watch.settled()
        self.feed_events(run.events(2, 2))
        choice = self.result.choices.get(0)
        if self._template is None or choice is None or 0 not in self.watch.choices \
                or self.watch.settled() != before \
                or "<" in text or choice.think.inside or choice.think.pending:  # (choice 0 untracked: past MAX_TRACKED)
            self.feed_events(run.events(3))
            return
        self._count(run, run.copies - 2, text)

    def _count(self, run: SSERun, more: int, text: str) -> None:
        """The last ``more`` copies of a run, settled: counted at once."""
        if more:
            step = run.copies * run.step
            self.watch.repeats(more, run.event.index + run.copies, run.event.offset + step, run.event.end + step, text)
            self.result.choices[0].add_content(text * more)
        self._counted = (run.event.data, text)

    def _keep(self, payload: Payload) -> None:
        if self.watch is None:
            self.payloads.append(payload)
        else:
            self.watch.payload(payload)

    def feed(self, payload: Payload) -> None:
        self._keep(payload)
        if payload.kind == "done":
            self.result.done = True
        elif payload.kind == "error":
            if self.result.error is None:
                self.result.error = error_object(payload)
        elif payload.kind == "chunk":
            self._chunk(payload.value)
        elif payload.kind == "annotation":
            self._annotation(payload.value)

    def _annotation(self, chunk: dict[str, Any]) -> None:
        """003 §3.7: an annotation's finish_reason content_filter is the stream's finish (a block caught while the
        answer streams); a verdict with filtered: true marks the answer blocked, also after the model's stop."""
        for position, raw in enumerate(chunk.get("choices") or []):
            index = raw.get("index", position)
            if raw.get("finish_reason") == "content_filter":
                choice = self.result.choice(index if isinstance(index, int) else position)
                if choice.finish_reason is None:
                    choice.finish_reason = "content_filter"
            results = raw.get("content_filter_results")
            if isinstance(results, dict) and '"filtered": true' in json.dumps(results):
                self.result.filtered = True

    def close(self) -> Assembled:
        for choice in self.result.choices.values():
            choice.finish_content()
        return self.result

    def _chunk(self, chunk: dict[str, Any]) -> None:
        usage = chunk.get("usage")
        if usage is not None:
            self.result.usage = usage
        choices = chunk.get("choices")
        if not isinstance(choices, list):
            return
        for position, raw in enumerate(choices):
            if not isinstance(raw, dict):
                continue
            index = raw.get("index", position)
            choice = self.result.choice(index if isinstance(index, int) else position)
            delta = raw.get("delta")
            if isinstance(delta, dict):
                merge_delta(choice, delta)
            reason = raw.get("finish_reason")
            if reason is not None and choice.finish_reason is None:
                choice.finish_reason = reason if isinstance(reason, str) else str(reason)


def _plain_text(value: Any) -> str | None:
    """The text of a chunk that is one choice at index 0 with only a content delta, its finish_reason null or absent,
    else None. A delta that also names the role (servers that send it on every chunk) is plain too: it returns the
    text, and the caller sets the role as ``merge_delta`` would.

    Such a chunk is classified "chunk" by ``_kind_of`` and merged by ``merge_delta`` exactly as this
    fast path does; the byte-split and fixture tests hold the two paths to the same results.
    """
    try:  # only a dict can be indexed by a string key, so each step below also checks the type
        choices = value["choices"]
        if type(choices) is not list or len(choices) != 1 or "error" in value or value.get("usage") is not None:
            return None
        raw = choices[0]
        if raw["index"] != 0 or raw.get("finish_reason") is not None:
            return None
        delta = raw["delta"]
        if len(delta) != 1 and (len(delta) != 2 or delta.get("role") != "assistant"):
            return None
        text = delta["content"]
    except (KeyError, TypeError, AttributeError):
        return None
    return text if type(text) is str else None


_VOLATILE_KEY = ',"timings":{'
_NUMBER = r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?"
# llama-server's per-chunk timings, last in the chunk's object: a flat object of numbers (valid JSON as matched)
_volatile = re.compile(r',"timings":\{(?:"[a-z_]+":' + _NUMBER + r'(?:,"[a-z_]+":' + _NUMBER + r")*)?\}(?=\}$)").sub
_NOTHING = ""
def _template_of(data: str, text: str, value: dict[str, Any]) -> tuple[str, str] | None:
    """A plain chunk's bytes around its text (``event_assembler.template_around`` of its one ``"content"`` key),
    unless it is a profile event. Any data that is that prefix, a string literal without quotes, backslashes or
    control characters, and that suffix is the same JSON document but for the text: every rule judges it as it
    judged this chunk, save the rules that read the text, which ``ChatWatch.repeat`` feeds."""
    if any(k in value for k in PROFILE_KEYS):
        return None
    return template_around(data, "content", text)


def _templated(data: str, template: tuple[str, str]) -> str | None:
    """The text of data that is the template's prefix, a plain string literal and its suffix (else None)."""
    prefix, suffix = template
    end = len(data) - len(suffix)
    start = len(prefix)
    if end - start < 2 or not data.startswith(prefix) or not data.endswith(suffix) or data[start] != '"' \
            or data[end - 1] != '"' or UNSAFE_IN_STRING.search(data, start + 1, end - 1):
        return None
    return data[start + 1:end - 1]


def merge_delta(choice: Choice, delta: dict[str, Any]) -> None:
    """Merge one delta (or one non-stream message) into a choice."""
    if len(delta) == 1 and type(delta.get("content")) is str:  # the common case: one piece of text
        if delta["content"]:
            choice.add_content(delta["content"])
        return
    role = delta.get("role")
    if isinstance(role, str) and choice.role is None:
        choice.role = role
    for carrier in ("reasoning_content", "reasoning"):
        text = delta.get(carrier)
        if isinstance(text, str) and text:
            choice.add_reasoning(carrier, text)
    content = delta.get("content")
    if isinstance(content, str) and content:
        choice.add_content(content)
    refusal = delta.get("refusal")
    if isinstance(refusal, str):
        choice.refusal = (choice.refusal or "") + refusal
    calls = delta.get("tool_calls")
    if isinstance(calls, list):
        for position, call in enumerate(calls):
            if isinstance(call, dict):
                merge_tool_call(choice, call, position)


def merge_tool_call(choice: Choice, piece: dict[str, Any], position: int) -> None:
    """Merge one tool-call piece by its index (a missing index falls back to its position)."""
    index = piece.get("index")
    if not isinstance(index, int) or isinstance(index, bool):
        index = position
    call = choice.tool_calls.get(index)
    if call is None:
        call = choice.tool_calls[index] = ToolCall(index)
    ident = piece.get("id")
    if ident is not None and call.id is None:
        call.id = ident if isinstance(ident, str) else json.dumps(ident)
    kind = piece.get("type")
    if isinstance(kind, str) and call.type is None:
        call.type = kind
    function = piece.get("function")
    if not isinstance(function, dict):
        return
    name = function.get("name")
    if isinstance(name, str):
        call.name = (call.name or "") + name
        if call.first_name is None:
            call.first_name = name
    arguments = function.get("arguments")
    if isinstance(arguments, str):
        call.arguments += arguments
    elif arguments is not None:
        call.arguments += json.dumps(arguments, separators=(",", ":"))


def assemble_events(events: list[SSEEvent]) -> tuple[list[Payload], Assembled]:
    """Classify and assemble a list of SSE events."""
    assembler = Assembler()
    assembler.feed_events(events)
    return assembler.payloads, assembler.close()


def assemble_body(body: Any, structured: bool = False) -> Assembled:
    """Assemble a non-stream ``chat.completion`` JSON body the same way."""
    result = Assembled(done=True, structured=structured)
    if not isinstance(body, dict):
        return result
    if "error" in body and "choices" not in body:
        result.error = error_object(Payload(0, 0, "error", body))
        return result
    result.usage = body.get("usage")
    choices = body.get("choices")
    for position, raw in enumerate(choices if isinstance(choices, list) else []):
        if not isinstance(raw, dict):
            continue
        index = raw.get("index", position)
        choice = result.choice(index if isinstance(index, int) else position)
        message = raw.get("message")
        if isinstance(message, dict):
            merge_delta(choice, message)
        reason = raw.get("finish_reason")
        if reason is not None:
            choice.finish_reason = reason if isinstance(reason, str) else str(reason)
        choice.finish_content()
    return result


def decode_and_assemble(pieces: Iterable[bytes], max_events: int | None = None, structured: bool = False,
                        watch: Any = None) -> tuple[list[SSEEvent], SSEStats, list[Payload], Assembled]:
    """Decode an SSE body delivered in pieces and assemble it: the whole wire layer in one call.
    With ``max_events``, feeding stops at the first piece that passes it (``stats.total_bytes`` says
    how far it got), so judging a hostile body costs a bounded amount of time and memory."""
    from conformance.protocols import feed_sse

    assembler = Assembler(watch)
    assembler.result.structured = structured
    events, stats = feed_sse(pieces, assembler.feed_events, max_events, keep=watch is None, runs=watch is not None)
    return events, stats, assembler.payloads, assembler.close()
