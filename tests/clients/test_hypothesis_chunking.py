"""`conformance clients --chunking hypothesis` (issue 23): Hypothesis byte splits of every recorded exchange at once,
one client run per example, and the cuts of an example the client read differently from the whole body shrunk. A
client that parses each read on its own is found out on the reference run's streams; the same client keeping the
end of a read for the next is not."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from conformance.clients import Client, check_client, streamed_exchanges

ROOT = Path(__file__).resolve().parents[2]
NAIVE = [sys.executable, str(ROOT / "tests" / "fuzz" / "naive_client.py")]
CLIENT = Client("naive", "a client that parses each read on its own", "python", ("naive==0",), "naive_client.py")


@pytest.fixture(scope="module")
def exchanges() -> list[tuple[str, object]]:
    chosen = [(stem, ex) for stem, ex in streamed_exchanges(ROOT / "reports" / "reference", "chat")
              if ex.status == 200 and ex.scenario in ("stream-plain", "stream-usage", "stream-long", "unicode")]
    assert len(chosen) >= 3
    return chosen


def test_a_client_that_loses_a_line_cut_across_reads_is_found(exchanges: list[tuple[str, object]],
                                                              tmp_path: Path) -> None:
    verdict = check_client(CLIENT, NAIVE, exchanges, tmp_path, ("whole", "hypothesis"), timeout=30)
    whole = [r for r in verdict.results if r.chunking == "whole"]
    cut = [r for r in verdict.results if r.chunking == "hypothesis"]
    assert len(whole) == len(cut) == len(exchanges)
    assert all(not r.problems for r in whole), [r.problems for r in whole]  # one write: it reads every stream right
    wrong = [r for r in cut if r.problems]
    assert wrong, "no Hypothesis split lost a line"
    for r in wrong:  # the cuts of the example that showed it, within the stream, where the reading went wrong
        assert r.cuts and all(0 < c < 1_000_000 for c in r.cuts) and r.cuts == sorted(r.cuts)
        assert any(p.startswith(("content", "finish_reason", "complete")) for p in r.problems), r.problems
    assert verdict.verdict == "works with limits"  # the reference streams are conformant: the client's own limit


def test_a_client_that_keeps_the_rest_of_a_read_reads_every_split(exchanges: list[tuple[str, object]],
                                                                  tmp_path: Path) -> None:
    verdict = check_client(CLIENT, [*NAIVE, "--careful"], exchanges, tmp_path, ("hypothesis",), timeout=30)
    assert [r.problems for r in verdict.results] == [[] for _ in exchanges]
    assert verdict.verdict == "works" and all(r.cuts is not None for r in verdict.results)
