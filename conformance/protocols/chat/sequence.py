"""The order of a chat stream as transition tables, in the style of h11's ``_state.py``.

Theory of operation. Each choice moves through its own lifecycle, and the stream as a whole
through another; both are tables of (state, event) -> next state. An event with no entry in the
table for the current state is a violation: the walk records it (event index, state, event) and
stays where it was, so one stray chunk gives one violation, not a cascade.

Choice lifecycle (../shared/seeds/000 "Normal lifecycle", 003 §3.2):
    IDLE --role/delta--> OPEN --finish--> FINISHED; after FINISHED only an empty delta (or a role,
    judged by CHK-009) may come: "finish_reason appears once, on the last choice chunk".
Stream lifecycle (000, 003 §3.4 "usage arrives in a separate chunk after the finish reason, ...
before [DONE]", 002 §1):
    OPEN --usage--> USAGE --done--> DONE; OPEN --done--> DONE; nothing after DONE.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum
from typing import Any

from conformance.protocols.chat.payloads import Payload


class ChoiceState(Enum):
    IDLE = "idle"
    OPEN = "open"
    FINISHED = "finished"


class ChoiceEvent(Enum):
    ROLE = "role"  # a delta with only a role
    DELTA = "delta"  # a delta that carries text, reasoning, a refusal or tool calls
    EMPTY = "empty"  # an empty delta (or only null values) without a finish
    FINISH = "finish"  # finish_reason set (its delta carried nothing)
    FINISH_WITH_DELTA = "finish-with-delta"  # finish_reason set on a delta that carries something


class StreamState(Enum):
    OPEN = "open"
    USAGE = "usage"
    DONE = "done"


class StreamEvent(Enum):
    CHUNK = "chunk"  # a chunk with choices and no finish
    FINISH = "finish"  # a chunk in which some choice finishes
    USAGE = "usage"  # a chunk with usage and no choices
    DONE = "done"
    OTHER = "other"  # profile events, annotations, errors, invalid payloads: judged by their own rules


CHOICE_TABLE: dict[ChoiceState, dict[ChoiceEvent, ChoiceState]] = {
    ChoiceState.IDLE: {ChoiceEvent.ROLE: ChoiceState.OPEN, ChoiceEvent.DELTA: ChoiceState.OPEN,
                       ChoiceEvent.EMPTY: ChoiceState.OPEN, ChoiceEvent.FINISH: ChoiceState.FINISHED,
                       ChoiceEvent.FINISH_WITH_DELTA: ChoiceState.FINISHED},
    ChoiceState.OPEN: {ChoiceEvent.ROLE: ChoiceState.OPEN, ChoiceEvent.DELTA: ChoiceState.OPEN,
                       ChoiceEvent.EMPTY: ChoiceState.OPEN, ChoiceEvent.FINISH: ChoiceState.FINISHED,
                       ChoiceEvent.FINISH_WITH_DELTA: ChoiceState.FINISHED},
    ChoiceState.FINISHED: {ChoiceEvent.ROLE: ChoiceState.FINISHED, ChoiceEvent.EMPTY: ChoiceState.FINISHED},
}

STREAM_TABLE: dict[StreamState, dict[StreamEvent, StreamState]] = {
    StreamState.OPEN: {StreamEvent.CHUNK: StreamState.OPEN, StreamEvent.FINISH: StreamState.OPEN,
                       StreamEvent.USAGE: StreamState.USAGE, StreamEvent.DONE: StreamState.DONE,
                       StreamEvent.OTHER: StreamState.OPEN},
    StreamState.USAGE: {StreamEvent.USAGE: StreamState.USAGE, StreamEvent.CHUNK: StreamState.USAGE,
                        StreamEvent.DONE: StreamState.DONE, StreamEvent.OTHER: StreamState.USAGE},
    StreamState.DONE: {},
}


@dataclass(frozen=True, slots=True)
class Violation:
    """An event the table does not allow in the state it arrived in."""

    event_index: int
    choice: int | None  # None for the stream lifecycle
    state: str
    event: str


def choice_event(choice: dict[str, Any]) -> ChoiceEvent:
    """What one choice object of a chunk does to its choice's lifecycle."""
    raw = choice.get("delta")
    delta: dict[str, Any] = raw if isinstance(raw, dict) else {}
    carries = any(v not in (None, "", []) for k, v in delta.items() if k != "role")
    if choice.get("finish_reason") is not None:
        return ChoiceEvent.FINISH_WITH_DELTA if carries else ChoiceEvent.FINISH
    if carries:
        return ChoiceEvent.DELTA
    return ChoiceEvent.ROLE if delta.get("role") is not None else ChoiceEvent.EMPTY


def stream_event(payload: Payload) -> StreamEvent:
    if payload.kind == "done":
        return StreamEvent.DONE
    if payload.kind != "chunk":
        return StreamEvent.OTHER
    choices = payload.value.get("choices")
    if not isinstance(choices, list) or not choices:
        return StreamEvent.USAGE if payload.value.get("usage") is not None else StreamEvent.CHUNK
    if any(isinstance(c, dict) and c.get("finish_reason") is not None for c in choices):
        return StreamEvent.FINISH
    return StreamEvent.CHUNK


def walk(payloads: Iterable[Payload]) -> list[Violation]:
    """Every violation of both tables, in stream order."""
    stream = StreamState.OPEN
    choices: dict[int, ChoiceState] = {}
    found: list[Violation] = []
    for p in payloads:
        event = stream_event(p)
        nxt = STREAM_TABLE[stream].get(event)
        if nxt is None:
            found.append(Violation(p.index, None, stream.value, event.value))
        else:
            stream = nxt
        if p.kind != "chunk" or not isinstance(p.value.get("choices"), list):
            continue
        for position, choice in enumerate(p.value["choices"]):
            if not isinstance(choice, dict):
                continue
            raw_index = choice.get("index", 0)
            index = raw_index if isinstance(raw_index, int) else position
            state = choices.get(index, ChoiceState.IDLE)
            cevent = choice_event(choice)
            after = CHOICE_TABLE[state].get(cevent)
            if after is None:
                found.append(Violation(p.index, index, state.value, cevent.value))
            else:
                choices[index] = after
    return found
