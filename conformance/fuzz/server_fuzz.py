"""``conformance fuzz``: Hypothesis sends generated requests to a server and judges each answer.

Every example is one request (conformance.fuzz.requests) and then a plain request that shows the
server is still alive. Its exchange is judged by the fuzz rules (FUZ-001 to FUZ-006). A failing
example raises a ``Violation`` of a class per rule, so Hypothesis tells distinct failures apart
and shrinks each one; the smallest failing request seen for a rule is what the report shows, with
a curl command that sends it again.

Bounds: ``max_examples`` generated requests in all (shared by the kinds: half valid, a third
invalid, the rest lenient), at most ``max_shrinks`` further requests per failure while shrinking,
and ``time_budget`` seconds, after which every further example is rejected at once and the run
ends. A server that stops answering ends the run early: nothing after that would mean anything.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, Verbosity, given, reject, settings
from hypothesis import seed as hypothesis_seed

from conformance import __version__
from conformance.checks import evaluate
from conformance.engine.client import record
from conformance.engine.repro import MAX_INLINE_BODY, curl
from conformance.engine.runner import Runner
from conformance.exchange import Exchange, analyze
from conformance.fuzz.outcome import expected_end
from conformance.fuzz.requests import KINDS, FuzzCase, cases
from conformance.model.limits import Limits
from conformance.model.observations import Followup
from conformance.results import CheckEntry, RunResult
from conformance.rules import RULES
from conformance.wire.body import held

FUZZ_RULES = tuple(r for r in RULES if r.category == "fuzz")
SHARES = {"valid": 0.5, "invalid": 0.35, "lenient": 0.15}
MAX_ROUNDS = 32
Log = Callable[[str], None]


class Violation(Exception):
    """A generated request broke a fuzz rule."""


_VIOLATIONS: dict[str, type[Violation]] = {}


def violation(rule_id: str) -> type[Violation]:
    """One exception class per rule: Hypothesis shrinks failures of different classes separately."""
    if rule_id not in _VIOLATIONS:
        _VIOLATIONS[rule_id] = type(f"Violation_{rule_id.replace('-', '_')}", (Violation,), {})
    return _VIOLATIONS[rule_id]


@dataclass(frozen=True)
class FuzzSettings:
    max_examples: int = 100
    seed: int | None = None  # None: a random seed, printed so that the run can be repeated
    time_budget: float = 300.0
    max_shrinks: int = 40
    vision: bool = False
    kinds: tuple[str, ...] = KINDS


@dataclass
class Failure:
    """The smallest request seen that breaks a rule, and how often the rule broke."""

    rule: str
    kind: str
    case: FuzzCase
    exchange: Exchange
    message: str
    evidence: dict[str, Any]
    count: int = 1

    @property
    def size(self) -> int:
        return len(self.case.wire())


@dataclass
class KindStats:
    examples: int = 0  # generated examples sent
    requests: int = 0  # every request sent, shrinking included
    statuses: dict[str, int] = field(default_factory=dict)
    applicable: dict[str, int] = field(default_factory=dict)  # rule -> examples that could show it


class ServerFuzzer:
    """Runs the fuzz kinds against one server through a ``Runner`` (its client, limits and key)."""

    def __init__(self, runner: Runner, config: FuzzSettings, log: Log | None = None) -> None:
        self.runner = runner
        self.config = config
        self.seed = config.seed if config.seed is not None else random.SystemRandom().randrange(2**32)
        self.log = log or (lambda _: None)
        self.failures: dict[tuple[str, str], Failure] = {}  # (rule, kind)
        self.stats = {kind: KindStats() for kind in config.kinds}
        self.dead: str | None = None
        self.deadline = 0.0
        self.shrink_requests = 0

    # -- one example -------------------------------------------------------------------------

    def out_of_budget(self) -> bool:
        return self.dead is not None or time.monotonic() > self.deadline

    def execute(self, case: FuzzCase) -> Exchange:
        """Send the case, then the liveness request; the exchange carries the liveness status."""
        limits = self.runner.settings.limits
        ex = self.runner.send(case.request(), limits)
        status = self._liveness(replace(limits, total=min(limits.total, 60.0)))
        return replace(ex, observations=ex.observations.with_(liveness=Followup(status)))

    def _liveness(self, limits: Limits) -> int | None:
        """A plain request on a new connection (every request has its own);
        one retry half a second later, so that a connection race is not taken for a dead server."""
        from conformance.model.scenario import Context
        from conformance.protocols import by_name

        req = by_name("chat").plain(Context(self.runner.model), stream=False, max_tokens=1)
        req.scenario = "fuzz-liveness"
        status = None
        for attempt in range(2):
            status = record(self.runner.base_url, req, limits, self.runner.settings.api_key).status
            if status == 200:
                return status
            if attempt == 0:
                time.sleep(0.5)
        return status

    def judge(self, kind: str, case: FuzzCase, ex: Exchange) -> list[str]:
        """Record the verdicts of one example; the ids of the rules it broke."""
        stats = self.stats[kind]
        stats.requests += 1
        key = str(ex.status) if ex.status is not None else str(ex.observations.aborted or "none")
        if ex.status is not None and ex.status >= 400:
            key += f" {_error_code(ex)}"
        stats.statuses[key] = stats.statuses.get(key, 0) + 1
        broken = []
        for verdict in evaluate(analyze(ex, self.runner.settings.profile), [r.id for r in FUZZ_RULES]):
            if verdict.outcome == "not_applicable":
                continue
            stats.applicable[verdict.rule.id] = stats.applicable.get(verdict.rule.id, 0) + 1
            if verdict.outcome != "failed":
                continue
            broken.append(verdict.rule.id)
            first = verdict.findings[0]
            evidence = {"event_index": first.event_index, "byte_offset": first.byte_offset, "excerpt": first.excerpt,
                        "kind": kind, "label": case.label, "request": case.describe(), "status": ex.status}
            candidate = Failure(verdict.rule.id, kind, case, ex, first.message, evidence)
            known = self.failures.get((verdict.rule.id, kind))
            if known is None:
                self.log(f"  {verdict.rule.id} broken by a {kind} request ({case.label}): "
                         f"{first.message.splitlines()[0]}")
                self.failures[verdict.rule.id, kind] = candidate
            else:  # keep the smaller request, count them all
                smaller = candidate if candidate.size <= known.size else known
                self.failures[verdict.rule.id, kind] = replace(smaller, count=known.count + 1)
        if ex.observations.liveness is None or ex.observations.liveness.status != 200:
            self.dead = f"the server stopped answering after a {kind} request ({case.label})"
        return broken

    # -- Hypothesis ---------------------------------------------------------------------------

    def _round(self, kind: str, quota: int, known: set[str], round_no: int) -> set[str]:
        """One Hypothesis run over ``kind`` until ``quota`` examples of that kind have been sent in
        all: the rules newly broken in it."""
        strategy = cases(kind, self.runner.model, self.config.vision)
        fresh_found: set[str] = set()
        budget = {"shrink_left": 0}

        @settings(max_examples=max(1, quota - self.stats[kind].examples), deadline=None, database=None, derandomize=False,
                  suppress_health_check=list(HealthCheck), phases=(Phase.generate, Phase.shrink),
                  report_multiple_bugs=True, verbosity=Verbosity.quiet, print_blob=False)
        @hypothesis_seed(self.seed + 7919 * round_no + KINDS.index(kind))
        @given(case=strategy)
        def prop(case: FuzzCase) -> None:
            stats = self.stats[kind]
            if self.out_of_budget():
                reject()
            if fresh_found:  # after a failure, further calls may be shrinking: they have their own cap
                if budget["shrink_left"] <= 0:
                    reject()
                budget["shrink_left"] -= 1
                self.shrink_requests += 1
            elif stats.examples >= quota:
                reject()
            else:
                stats.examples += 1
            ex = self.execute(case)
            broken = self.judge(kind, case, ex)
            fresh = sorted(set(broken) - known)
            if fresh:
                if not fresh_found or fresh[0] not in fresh_found:
                    budget["shrink_left"] += self.config.max_shrinks
                fresh_found.update(fresh)
                raise violation(fresh[0])(f"{case.label}: {fresh}")

        try:
            prop()
        except Exception as exc:  # Violation(s), Flaky, Unsatisfiable end the search; a bug of ours surfaces
            if not expected_end(exc, (Violation,)):
                raise
        return fresh_found

    def explore(self, kind: str, quota: int) -> None:
        """Hypothesis runs until the quota is spent: a run ends soon after it finds a failure (and
        shrinks it), so the next one goes on with the failures known so far no longer raising."""
        known = {rule for rule, k in self.failures if k == kind}
        for round_no in range(MAX_ROUNDS):
            before = self.stats[kind].examples
            if self.out_of_budget() or before >= quota:
                return
            known |= self._round(kind, quota, known, round_no)
            if self.stats[kind].examples == before:  # no progress: Hypothesis has nothing left to try
                return

    def run(self, bodies: Path | None = None) -> RunResult:
        started = datetime.now(timezone.utc).isoformat(timespec="seconds")
        clock = time.monotonic()
        self.deadline = clock + self.config.time_budget
        self.runner.discover()
        self.log(f"fuzzing {self.runner.base_url} (model {self.runner.model}): seed {self.seed}, "
                 f"{self.config.max_examples} examples, {self.config.time_budget:.0f} s at most")
        quotas = self.quotas()
        for kind in self.config.kinds:
            if self.out_of_budget():
                break
            start = time.monotonic()
            self.explore(kind, quotas[kind])
            stats = self.stats[kind]
            self.log(f"{kind:8} {stats.examples:4} examples, {stats.requests:4} requests, "
                     f"{time.monotonic() - start:6.1f}s  statuses {dict(sorted(stats.statuses.items()))}")
        result = RunResult(tool={"name": "chat-conformance", "version": __version__}, started_at=started,
                           target={"base_url": self.runner.base_url, "model": self.runner.model,
                                   "profile": self.runner.settings.profile, "capabilities": {}},
                           strict=self.runner.settings.strict)
        result.checks = self.entries(bodies)
        result.scenarios = [{"name": f"fuzz-{kind}", "category": "fuzz", "status": None,
                             "elapsed_s": None, "aborted": None, "examples": s.examples, "requests": s.requests,
                             "statuses": s.statuses, "seed": self.seed}
                            for kind, s in self.stats.items()]
        result.duration_s = time.monotonic() - clock
        return result

    def quotas(self) -> dict[str, int]:
        kinds = self.config.kinds
        total = sum(SHARES[k] for k in kinds)
        quotas = {k: max(1, int(self.config.max_examples * SHARES[k] / total)) for k in kinds}
        quotas[kinds[0]] += max(0, self.config.max_examples - sum(quotas.values()))
        return quotas

    def entries(self, bodies: Path | None = None) -> list[CheckEntry]:
        """One entry per rule and kind that could show it; a failure carries the smallest request (its
        body saved under ``bodies`` when it is too long for the command line)."""
        base_url, api_key = self.runner.base_url, self.runner.settings.api_key
        entries = []
        for rule in FUZZ_RULES:
            for kind, stats in self.stats.items():
                seen = stats.applicable.get(rule.id, 0)
                failure = self.failures.get((rule.id, kind))
                scenario = f"fuzz-{kind}"
                if failure is not None:
                    message = (f"{failure.count} of {seen} {kind} requests broke it; the smallest "
                               f"({failure.case.label}, seed {self.seed}):\n{failure.message}")
                    body_file = None
                    if bodies is not None and failure.size > MAX_INLINE_BODY:
                        bodies.mkdir(parents=True, exist_ok=True)
                        path = bodies / f"{rule.id}-{kind}.body"
                        path.write_bytes(failure.case.wire())
                        body_file = str(path)
                    entries.append(CheckEntry(rule.id, rule.category, rule.level, scenario, "failed", message,
                                              failure.evidence,
                                              curl(base_url, failure.case.request(), api_key, body_file)))
                elif seen:
                    entries.append(CheckEntry(rule.id, rule.category, rule.level, scenario, "passed",
                                              f"{seen} {kind} requests (seed {self.seed})", None, ""))
        if self.dead:
            for entry in entries:
                if entry.outcome == "passed":
                    entry.message += f"; the run ended early: {self.dead}"
        return entries


def _error_code(ex: Exchange) -> str:
    """The error code (or the start of the message) of a refusal, for the log."""
    try:
        error = json.loads(held(ex.body)).get("error")
    except (ValueError, AttributeError):
        return "?"
    if isinstance(error, dict):
        return str(error.get("code") or str(error.get("message", "?"))[:30])
    return str(error)[:30]
