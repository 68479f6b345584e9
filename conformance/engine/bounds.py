"""The worst-case wall time of a run, as a function of the limits (from ``--timeout``), the workers
and the scenarios: every request ends within its total limit, and each scenario kind sends a known
number of them, so the run ends within this bound whatever the server does.

Discovery takes at most min(30, T) + 2 s (the model list, then /health for a stated context), with T the total
limit of one response; each scenario kind (``engine.kinds``) says the longest one of its scenarios can take.
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
from conformance.engine.kinds import kind_of
from conformance.engine.runner import HEAVY
from conformance.scenarios import BY_NAME

JUDGE_S = 3.0


def worst_case_seconds(limits: Limits, workers: int, names: Iterable[str]) -> float:
    """The bound on a run's wall time (live phase and judging), in seconds."""
    chosen = [BY_NAME[n] for n in names]
    parallel = [kind_of(sc).seconds(limits) for sc in chosen if not kind_of(sc).alone and sc.name not in HEAVY]
    alone = [kind_of(sc).seconds(limits) for sc in chosen if kind_of(sc).alone or sc.name in HEAVY]
    rounds = math.ceil(len(parallel) / max(1, workers))
    return min(30.0, limits.total) + 2 + rounds * max(parallel, default=0.0) + sum(alone) + JUDGE_S * len(chosen)
