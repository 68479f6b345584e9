"""The worst-case wall time of a run, as a function of the limits (from ``--timeout``), the workers
and the scenarios: every request ends within its total limit, and each scenario kind sends a known
number of them, so the run ends within this bound whatever the server does.

With T the total limit of one response (``--timeout``), W the workers and, for each scenario s, the longest its kind
(``engine.kinds``) can take, t(s) (T for one request; T + min(60, T) for an error scenario and its liveness request;
3T + 10 for the disconnect; and so on):

    bound = D + sum(t over the concurrent scenarios) / W + max(t over them) * (W - 1) / W
              + sum(t over the one-at-a-time scenarios) + JUDGE_S * N

D = min(30, T) + 2 is discovery (the model list, then /health for a stated context); the concurrent scenarios are
handed to W workers as each frees up, and a greedy schedule of that kind ends within the middle two terms (Graham's
bound for list scheduling: no worker sits idle while a scenario waits, so the last one starts by sum/W and takes
at most max); the one-at-a-time scenarios (the heavy ones and those that measure the server) run after them; judging
adds at most JUDGE_S per scenario (N of them; bodies are judged on at most 64 MiB each). Whatever this says, the run
ends by --run-timeout (default max(300 s, 10T)), marked incomplete if it had to, and then judges and reports what
it has: the bound a run is held to is the smaller of the two (``run_bound``).

That is the worst case of a server that answers each request just within its limits. A server that does not takes
a fast path (engine.runner): after SILENT_IN_A_ROW (3) requests in a row with no response within their limits, or
LIMITED_IN_A_ROW (3) requests in a row cut at a time or size limit (a server that dribbles or floods every
answer), nothing more is sent and the rest of the run is cut in one sentence; the run then ends within the scenarios
already in flight, a few T at four workers (measured in benchmarks/hostile.py).
"""

from __future__ import annotations

from collections.abc import Iterable

from conformance.engine.kinds import kind_of
from conformance.engine.runner import HEAVY
from conformance.model.limits import Limits
from conformance.scenarios import BY_NAME

JUDGE_S = 3.0
AFTER_S = 30.0  # after --run-timeout cuts a run: what was recorded is judged and reported (bodies within the caps)


def worst_case_seconds(limits: Limits, workers: int, names: Iterable[str]) -> float:
    """The bound on a run's wall time (live phase and judging), in seconds, whatever the server does."""
    chosen = [BY_NAME[n] for n in names]
    parallel = [kind_of(sc).seconds(limits) for sc in chosen if not kind_of(sc).alone and sc.name not in HEAVY]
    alone = [kind_of(sc).seconds(limits) for sc in chosen if kind_of(sc).alone or sc.name in HEAVY]
    w = max(1, workers)
    scheduled = sum(parallel) / w + max(parallel, default=0.0) * (w - 1) / w
    return min(30.0, limits.total) + 2 + scheduled + sum(alone) + JUDGE_S * len(chosen)


def run_bound(limits: Limits, workers: int, names: Iterable[str], run_timeout: float) -> float:
    """The bound a run is held to: the worst case above, or the run timeout and the judging of what it recorded."""
    return min(worst_case_seconds(limits, workers, names), run_timeout + AFTER_S)
