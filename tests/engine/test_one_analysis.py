"""Each exchange of a run is decoded once, under the run's profile: the kinds that read an answer while the run
goes on (stop-compare, cancel-completed, disconnect), the cut-short resend check, the capabilities, the token
totals, -x and the final judging all read the same analysis."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from conformance import exchange as exchange_module
from conformance.engine.run import execute
from conformance.engine.servers import ServerProcess
from conformance.settings import build_settings

CHOSEN = "stream-plain,non-stream,stop-sequence,cancel-completed,disconnect,prompt-reuse,responses-stream,stream-usage"


def test_every_exchange_is_analysed_once_under_the_run_profile(ref_server: ServerProcess,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    decoded: Counter[int] = Counter()
    profiles: set[str] = set()
    bodies: dict[int, bytes] = {}
    real = exchange_module._analyze

    def counting(ex: Any, prof: Any, cuts: Any) -> Any:
        decoded[id(ex.body)] += 1
        bodies[id(ex.body)] = ex.body  # kept alive, so an id is never reused by another body
        profiles.add(prof.name)
        return real(ex, prof, cuts)

    monkeypatch.setattr(exchange_module, "_analyze", counting)
    result = execute(build_settings(base_url=ref_server.base_url, profile="strict", scenarios=CHOSEN, timeout=30,
                                    exitfirst=True))
    assert {s["name"] for s in result.scenarios} >= {"stop-sequence", "cancel-completed", "prompt-reuse"}
    assert decoded and max(decoded.values()) == 1, [bodies[k][:80] for k, n in decoded.items() if n > 1]
    assert profiles == {"strict"}


def test_every_exchange_is_judged_once_in_its_worker(ref_server: ServerProcess,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The rules are evaluated as each scenario ends, in the thread that ran it; the judging after the run (and -x's)
    reads those verdicts and evaluates nothing itself."""
    import threading

    from conformance.checks import registry
    from conformance.rules import RULES  # where judged() finds evaluate (the package re-exports it)

    judged: Counter[tuple[int, Any]] = Counter()
    threads: set[str] = set()
    bodies: dict[int, bytes] = {}
    real = registry.evaluate

    def counting(a: Any, rule_ids: Any = None) -> Any:
        judged[(id(a.exchange.body), rule_ids)] += 1
        bodies[id(a.exchange.body)] = a.exchange.body
        threads.add("main" if threading.current_thread() is threading.main_thread() else "worker")
        return real(a, rule_ids)

    monkeypatch.setattr(registry, "evaluate", counting)
    result = execute(build_settings(base_url=ref_server.base_url, scenarios=CHOSEN, timeout=30, exitfirst=True))
    assert {s["name"] for s in result.scenarios} >= set(CHOSEN.split(","))
    assert judged and max(judged.values()) == 1, [bodies[k[0]][:80] for k, n in judged.items() if n > 1]
    assert threads == {"worker"}
    assert {rules for _, rules in judged} == {frozenset(r.id for r in RULES if r.category != "fuzz")}
    assert result.checks and not [c for c in result.checks if c.outcome in ("failed", "error")]
