"""The chunk-order transition tables: legal orders walk clean, each illegal step is one violation."""

from __future__ import annotations

import json

import pytest

from conformance.protocols.chat import sequence
from conformance.protocols.chat.assembler import assemble_events
from conformance.wire.sse import decode_sse


def walk(*payloads: object) -> list[tuple[int, int | None, str, str]]:
    body = "".join(f"data: {p if isinstance(p, str) else json.dumps(p)}\n\n" for p in payloads).encode()
    found, _ = assemble_events(decode_sse(body)[0])
    return [(v.event_index, v.choice, v.state, v.event) for v in sequence.walk(found)]


def chunk(delta: dict[str, object], finish: str | None = None, index: int = 0) -> dict[str, object]:
    return {"choices": [{"index": index, "delta": delta, "finish_reason": finish}]}


USAGE = {"choices": [], "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}
CASES = [
    ("plain", [chunk({"role": "assistant", "content": "Hi"}), chunk({}, "stop"), "[DONE]"], []),
    ("usage-after-finish", [chunk({"content": "Hi"}), chunk({}, "stop"), USAGE, "[DONE]"], []),
    ("two-choices-interleaved", [chunk({"content": "a"}, index=0), chunk({"content": "b"}, index=1),
                                 chunk({}, "stop", 0), chunk({"content": "c"}, index=1), chunk({}, "stop", 1),
                                 "[DONE]"], []),
    ("content-after-finish", [chunk({"content": "a"}), chunk({}, "stop"), chunk({"content": "b"}), "[DONE]"],
     [(2, 0, "finished", "delta")]),
    ("second-finish", [chunk({"content": "a"}, "stop"), chunk({}, "stop"), "[DONE]"], [(1, 0, "finished", "finish")]),
    ("usage-before-finish", [chunk({"content": "a"}), USAGE, chunk({}, "stop"), "[DONE]"],
     [(2, None, "usage", "finish")]),
    ("chunk-after-done", [chunk({"content": "a"}, "stop"), "[DONE]", chunk({"content": "b"})],
     [(2, None, "done", "chunk"), (2, 0, "finished", "delta")]),
]


@pytest.mark.parametrize(("payloads", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_walk(payloads: list[object], expected: list[tuple[int, int | None, str, str]]) -> None:
    assert walk(*payloads) == expected


def test_every_state_has_a_row() -> None:
    assert set(sequence.CHOICE_TABLE) == set(sequence.ChoiceState)
    assert set(sequence.STREAM_TABLE) == set(sequence.StreamState)
