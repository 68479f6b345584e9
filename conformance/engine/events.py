"""The events a run yields, in order: run started, each scenario (started, its exchanges, finished),
then each finding and each rule's verdict, and last the run finished with its ``RunResult``.

Front-ends render them as they come (the CLI's live progress) or wait for the last one.
"""

from __future__ import annotations

from dataclasses import dataclass

from conformance.exchange import Exchange
from conformance.model import Level, Outcome
from conformance.results import CheckEntry, RunResult


@dataclass(frozen=True, slots=True)
class RunStarted:
    base_url: str
    model: str
    profile: str
    scenarios: tuple[str, ...]
    reference: bool  # the bundled reference server was started for this run
    bound_s: float = 0.0  # the run ends within this many seconds, whatever the server does (engine.bounds)


@dataclass(frozen=True, slots=True)
class ServerStarting:
    """The bundled reference server is being started (no base URL given)."""


@dataclass(frozen=True, slots=True)
class ServerWaiting:
    """--wait: the run waits for the server to answer (it is starting up)."""

    base_url: str
    seconds: float


@dataclass(frozen=True, slots=True)
class RoutesProbed:
    """The routes' probes (the run's first requests) have answered: which protocols the server serves, which it does
    not (with what their probe answered), and how many scenarios are therefore not sent."""

    served: tuple[str, ...]
    unserved: tuple[tuple[str, str], ...]  # (protocol, "POST /v1/chat/completions answered 404")
    unsent: int
    total: int  # scenarios the run will run from here on (an estimate until the capabilities are known)


@dataclass(frozen=True, slots=True)
class ScenarioStarted:
    name: str
    category: str


@dataclass(frozen=True, slots=True)
class ExchangeRecorded:
    scenario: str
    exchange: Exchange


@dataclass(frozen=True, slots=True)
class ScenarioFinished:
    name: str
    category: str
    status: int | None
    elapsed_s: float
    aborted: str | None
    done: int  # scenarios finished so far
    total: int  # scenarios this run will run (an estimate until the capabilities are known)


@dataclass(frozen=True, slots=True)
class FindingReported:
    """A failed (or errored) rule in one scenario."""

    entry: CheckEntry


@dataclass(frozen=True, slots=True)
class RuleJudged:
    rule: str
    level: Level
    outcome: Outcome
    message: str
    scenarios: tuple[str, ...]  # where it failed (or was judged, when it passed)


@dataclass(frozen=True, slots=True)
class RunFinished:
    result: RunResult


Event = (RunStarted | ServerStarting | RoutesProbed | ScenarioStarted | ExchangeRecorded | ScenarioFinished | FindingReported
         | RuleJudged | RunFinished)
