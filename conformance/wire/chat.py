"""Chat Completions payloads and the assembler that turns them into one message per choice.

Invariant: any list of SSE events (or any JSON body) yields payloads and an ``Assembled`` value;
never an exception. Malformed input is kept as ``kind="invalid"`` payloads for the rules.

Theory of operation. Each ``data:`` payload is classified on its top-level keys before any chunk
decoding, as ../shared/seeds/000 asks ("Consumers should dispatch on top-level keys before
applying an OpenAI chunk decoder"): ``[DONE]``; an error (``event: error`` or an ``error`` key,
../shared/seeds/003 §3.5); an AFM profile event; an Azure prompt-filter chunk or an annotation
chunk (003 §3.7); else a chunk. Chunks are merged per choice: content and the three reasoning
carriers of 003 §4 (``reasoning_content``, ``reasoning``, inline ``<think>``), refusal, and tool
calls by ``index`` (003 §3.3: "keep the first non-null id, type ... append every
function.arguments fragment"; names are appended too, because "Names can be split across
pieces").
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from conformance.wire.sse import DONE, SSEDecoder, SSEEvent, SSEStats

THINK_OPEN = "<think>"
THINK_CLOSE = "</think>"
PROFILE_KEYS = ("afm_profile", "afm_profile_extended")
FILTER_KEYS = ("prompt_filter_results", "prompt_annotations")


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


_DECODER = json.JSONDecoder(parse_constant=_reject_constant)

_fast_loads: Callable[[bytes], Any] | None
try:  # orjson parses a typical chunk about four times faster; the stdlib decides what it refuses
    from orjson import loads as _fast_loads
except ImportError:  # pragma: no cover - orjson is a dependency, but the wire layer works without it
    _fast_loads = None


def loads_strict(text: str) -> Any:
    """Parse JSON text without the NaN and Infinity extensions; raises ``ValueError``.

    orjson answers first; what it refuses (integers beyond 64 bits, lone surrogate escapes) is
    parsed again by the stdlib decoder, so both give the same verdict on every input.
    """
    if _fast_loads is not None:
        try:
            return _fast_loads(text.encode("utf-8", "surrogatepass"))
        except ValueError:
            pass
    try:
        return _DECODER.decode(text)
    except RecursionError as exc:
        raise ValueError("JSON nested too deeply") from exc


class Payload(NamedTuple):
    """One classified ``data:`` payload (a NamedTuple, like ``SSEEvent``, for speed)."""

    index: int  # type: ignore[assignment]  # the field shadows tuple.index on purpose
    offset: int
    kind: str  # done | invalid | error | profile | prompt_filter | annotation | chunk | other
    value: Any
    event_type: str = "message"
    problem: str | None = None


def classify(event: SSEEvent) -> Payload:
    """Parse one event's data and name its kind from the top-level keys."""
    if event.data == DONE:
        return Payload(event.index, event.offset, "done", None, event.type)
    try:
        value = loads_strict(event.data)
    except ValueError as exc:
        kind = "error" if event.type == "error" else "invalid"
        return Payload(event.index, event.offset, kind, event.data, event.type, str(exc)[:200])
    return Payload(event.index, event.offset, _kind_of(value, event.type), value, event.type)


def _kind_of(value: Any, event_type: str) -> str:
    if event_type == "error":
        return "error"
    if not isinstance(value, dict):
        return "other"
    choices = value.get("choices")
    if choices and type(choices) is list and type(choices[0]) is dict and "delta" in choices[0] \
            and "error" not in value:
        return "chunk"  # the common case, decided without scanning every key
    if "error" in value and "choices" not in value:
        return "error"
    if any(key in value for key in PROFILE_KEYS) and "choices" not in value:
        return "profile"
    if any(key in value for key in FILTER_KEYS) and not choices:
        return "prompt_filter"
    if isinstance(choices, list) and choices and all(_is_annotation(c) for c in choices):
        return "annotation"
    return "chunk"


def _is_annotation(choice: Any) -> bool:
    return (
        isinstance(choice, dict)
        and "delta" not in choice
        and ("content_filter_offsets" in choice or "content_filter_results" in choice)
    )


class ThinkSplitter:
    """Splits inline ``<think>…</think>`` out of content; markers may be cut anywhere."""

    def __init__(self) -> None:
        self.inside = False
        self.seen = False
        self.pending = ""
        self.parts: list[tuple[bool, str]] = []  # (is_reasoning, text)

    def feed(self, text: str) -> None:
        if self.pending:
            text, self.pending = self.pending + text, ""
        elif "<" not in text:
            self._emit(text)
            return
        while text:
            marker = THINK_CLOSE if self.inside else THINK_OPEN
            at = text.find(marker)
            if at >= 0:
                self._emit(text[:at])
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

    def to_json(self) -> dict[str, Any]:
        return {"index": self.index, "id": self.id, "type": self.type, "name": self.name,
                "arguments": self.arguments}


@dataclass(slots=True)
class Choice:
    """The assembly of one choice."""

    index: int
    role: str | None = None
    raw_parts: list[str] = field(default_factory=list)
    reasoning_parts: list[str] = field(default_factory=list)
    carriers: list[str] = field(default_factory=list)
    refusal: str | None = None
    tool_calls: dict[int, ToolCall] = field(default_factory=dict)
    finish_reason: str | None = None
    think: ThinkSplitter = field(default_factory=ThinkSplitter)

    @property
    def raw_content(self) -> str:
        """The content deltas as sent, think markup included."""
        return "".join(self.raw_parts)

    @property
    def content(self) -> str:
        return "".join(text for is_reasoning, text in self.think.parts if not is_reasoning)

    @property
    def reasoning(self) -> str:
        return "".join(self.reasoning_parts)

    def add_reasoning(self, carrier: str, text: str) -> None:
        if carrier not in self.carriers:
            self.carriers.append(carrier)
        self.reasoning_parts.append(text)

    def add_content(self, text: str) -> None:
        self.raw_parts.append(text)
        think = self.think
        if not think.inside and not think.pending and "<" not in text:
            think.parts.append((False, text))  # plain answer text: nothing to split
            return
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

    def choice(self, index: int = 0) -> Choice:
        if index not in self.choices:
            self.choices[index] = Choice(index)
        return self.choices[index]

    def to_json(self) -> dict[str, Any]:
        first = self.choices[min(self.choices)].to_json() if self.choices else Choice(0).to_json()
        first.pop("index")
        out: dict[str, Any] = {**first, "usage": self.usage, "error": self.error}
        if len(self.choices) > 1:
            out["choices"] = [self.choices[i].to_json() for i in sorted(self.choices)]
        return out


def error_object(payload: Payload) -> dict[str, Any]:
    """The error a payload reports, as an object with at least ``message``."""
    value = payload.value
    if isinstance(value, dict):
        inner = value.get("error", value)
        if isinstance(inner, dict):
            return inner
        return {"message": str(inner)}
    return {"message": str(value)}


class Assembler:
    """Merges classified payloads into an ``Assembled`` message."""

    def __init__(self) -> None:
        self.result = Assembled()
        self.payloads: list[Payload] = []

    def feed_events(self, events: list[SSEEvent]) -> None:
        """Classify and merge events. The commonest event, a chunk with one choice at index 0 whose
        delta is one piece of text, is merged inline; anything else takes ``classify`` and ``feed``.
        """
        payloads = self.payloads
        fast = _fast_loads
        first: Choice | None = None
        for event in events:
            data = event.data
            if fast is not None and event.type == "message" and data[:1] == "{":
                try:
                    value = fast(data.encode())  # orjson parses bytes three times faster than str
                except ValueError:
                    value = None
                text = _plain_text(value)
                if text is not None:
                    payloads.append(Payload(event.index, event.offset, "chunk", value, "message"))
                    if text:
                        if first is None:
                            first = self.result.choice(0)
                        first.add_content(text)
                    continue
            self.feed(classify(event))

    def feed(self, payload: Payload) -> None:
        self.payloads.append(payload)
        if payload.kind == "done":
            self.result.done = True
        elif payload.kind == "error":
            if self.result.error is None:
                self.result.error = error_object(payload)
        elif payload.kind == "chunk":
            self._chunk(payload.value)

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
    """The text of a chunk that is one choice at index 0 with only a content delta, else None.

    Such a chunk is classified "chunk" by ``_kind_of`` and merged by ``merge_delta`` exactly as this
    fast path does; the byte-split and fixture tests hold the two paths to the same results.
    """
    try:  # only a dict can be indexed by a string key, so each step below also checks the type
        choices = value["choices"]
        if type(choices) is not list or len(choices) != 1 or "error" in value or value.get("usage") is not None:
            return None
        raw = choices[0]
        if raw["index"] != 0 or raw["finish_reason"] is not None:
            return None
        delta = raw["delta"]
        if len(delta) != 1:
            return None
        text = delta["content"]
    except (KeyError, TypeError):
        return None
    return text if type(text) is str else None


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


def assemble_body(body: Any) -> Assembled:
    """Assemble a non-stream ``chat.completion`` JSON body the same way."""
    result = Assembled(done=True)
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


def decode_and_assemble(pieces: Iterable[bytes]) -> tuple[list[SSEEvent], SSEStats, list[Payload], Assembled]:
    """Decode an SSE body delivered in pieces and assemble it: the whole wire layer in one call."""
    decoder = SSEDecoder()
    assembler = Assembler()
    events: list[SSEEvent] = []
    for piece in pieces:
        batch = decoder.feed(piece)
        events += batch
        assembler.feed_events(batch)
    batch = decoder.close()
    events += batch
    assembler.feed_events(batch)
    return events, decoder.stats, assembler.payloads, assembler.close()
