"""The report's stream timelines: first byte, stalls and buffering, as a small SVG with no script."""

from __future__ import annotations

from conformance.engine.judge import TIMELINE_POINTS, timeline
from conformance.report.timeline import describe, svg


def test_a_steady_stream_is_green_with_its_first_byte() -> None:
    points = [[0.05 + i * 0.01, 100 * (i + 1)] for i in range(20)]
    info = describe(points, 0.3)
    assert round(info["ttfb"], 2) == 0.05 and not info["buffered"] and info["reads"] == 20
    drawn = svg(points, 0.3)
    assert drawn.startswith("<svg") and "#1e7b34" in drawn and "<script" not in drawn and "dde3ec" not in drawn


def test_a_stall_and_buffering_are_marked() -> None:
    stalled = [[0.1, 100], [0.2, 200], [3.2, 300]]
    assert describe(stalled, 3.3)["gap"] >= 3.0 and "dde3ec" in svg(stalled, 3.3)
    buffered = [[2.4, 5000]]
    assert describe(buffered, 2.4)["buffered"] and "#b3261e" in svg(buffered, 2.4)


def test_long_streams_are_thinned_but_keep_their_widest_gap() -> None:
    arrivals = tuple((i * 0.01 + (5.0 if i > 700 else 0.0), i * 10) for i in range(1000))
    points = timeline(arrivals)
    assert len(points) <= TIMELINE_POINTS + 3 and points[0][0] == 0.0 and points[-1][1] == 9990
    assert describe(points, 15.0)["gap"] >= 5.0
