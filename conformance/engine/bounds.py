"""The worst-case wall time of a run, as a function of the limits (from ``--timeout``), the workers
and the scenarios: every request ends within its total limit, and each scenario kind sends a known
number of them, so the run ends within this bound whatever the server does.

With T the total limit of one response, F the first-byte limit (min(T, 60)), W the workers:
    discovery                   min(30, T) + 2     (the model list, then /health for a stated context)
    plain, http10               T
    followup (error scenarios)  T + min(60, T)     (the request, then a liveness request; a request the
                                                    server must refuse gets only min(10, T) to begin)
    disconnect                  3T + 10            (baseline, the stream, a follow-up; counters 2 s each)
    cancel                      F + 2T + 5         (the stream's first event, the cancel call, the stream)
    repeat, stop-compare, clock 2T                 (the same request twice: prompt reuse; without and with stop;
                                                    a stream, then a longer one)
    cancel-completed            3T                 (a stream, then two cancel calls for it)
    burst                       Q + 6.5            (twelve at once; Q, the queue wait, at most F)
The independent scenarios run W at a time, the others one after another; judging adds at most
JUDGE_S per scenario (bodies are judged on at most 20,000 events or 2 MiB each). Whatever this
says, the run ends by --run-timeout (default max(300 s, 10T)), marked incomplete if it had to.

That is the worst case of a server that answers, however slowly. A server that stops answering takes the fast
path: after SILENT_IN_A_ROW (3) requests in a row without a response within their limits (engine.runner), nothing
more is sent and the rest of the run is cut as "the server stopped answering"; the run then ends within the
scenarios already in flight, about 3T at four workers (measured: 30 s at --timeout 10, benchmarks/hostile.py).
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from conformance.client import Limits
from conformance.engine.runner import ALONE, HEAVY
from conformance.scenarios import BY_NAME

JUDGE_S = 3.0


def scenario_seconds(kind: str, limits: Limits) -> float:
    """The longest one scenario of this kind can take."""
    t, f = limits.total, limits.first_byte
    return {"followup": t + min(60.0, t), "disconnect": 3 * t + 10, "cancel": f + 2 * t + 5,
            "burst": f + 6.5, "repeat": 2 * t, "stop-compare": 2 * t, "clock": 2 * t,
            "cancel-completed": 3 * t}.get(kind, t)


def worst_case_seconds(limits: Limits, workers: int, names: Iterable[str]) -> float:
    """The bound on a run's wall time (live phase and judging), in seconds."""
    chosen = [BY_NAME[n] for n in names]
    parallel = [scenario_seconds(sc.kind, limits) for sc in chosen if sc.kind not in ALONE and sc.name not in HEAVY]
    alone = [scenario_seconds(sc.kind, limits) for sc in chosen if sc.kind in ALONE or sc.name in HEAVY]
    rounds = math.ceil(len(parallel) / max(1, workers))
    return min(30.0, limits.total) + 2 + rounds * max(parallel, default=0.0) + sum(alone) + JUDGE_S * len(chosen)
