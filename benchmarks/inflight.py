"""``conformance`` run as usual, with the time it has a request on the network measured from inside.

    python benchmarks/inflight.py OUT.json run --base-url URL ...

Every exchange's HTTP part (``client._exchange_http11``: the request sent, the response read to its end or its
cut, nothing masked or judged) is timed, and at exit OUT.json gets the union of those intervals (the seconds during
which at least one request was in flight), their sum and count, and the wall time from the start of the command.
This is the run's own network time: the run's scheduling as it is (a follow-up waits for the answer it follows, a
comparison for both of its streams), which sending every request again four at a time cannot reproduce."""

from __future__ import annotations

import atexit
import json
import sys
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import conformance.engine.client as client  # noqa: E402

START = time.monotonic()
SPANS: list[tuple[float, float]] = []
LOCK = threading.Lock()
ORIGINAL = client._exchange_http11


def timed(*args: Any, **kwargs: Any) -> None:
    begun = time.monotonic()
    try:
        ORIGINAL(*args, **kwargs)
    finally:
        with LOCK:
            SPANS.append((begun - START, time.monotonic() - START))


def union(spans: list[tuple[float, float]]) -> float:
    total, current = 0.0, None
    for begun, ended in sorted(spans):
        if current is None or begun > current[1]:
            if current is not None:
                total += current[1] - current[0]
            current = [begun, ended]
        else:
            current[1] = max(current[1], ended)
    return total + (current[1] - current[0] if current is not None else 0.0)


def write(out: Path) -> None:
    with LOCK:
        spans = list(SPANS)
    out.write_text(json.dumps({"in_flight_s": union(spans), "sum_s": sum(e - b for b, e in spans),
                               "exchanges": len(spans), "wall_s": time.monotonic() - START}))


def main() -> None:
    out = Path(sys.argv[1])
    client._exchange_http11 = timed
    atexit.register(write, out)
    from conformance.cli import main as cli

    sys.argv = ["conformance", *sys.argv[2:]]
    cli()


if __name__ == "__main__":
    main()
