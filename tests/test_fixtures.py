"""Every committed fixture gives exactly the verdict and assembly its sidecar expects."""

from __future__ import annotations

import pytest
from syrupy.assertion import SnapshotAssertion

from conformance.checks import evaluate
from conformance.engine.inspect import assembled_json
from conformance.exchange import analyze
from conformance.fixtures import Fixture, load_all

FIXTURES = load_all()


def test_at_least_fifty_fixtures() -> None:
    assert len(FIXTURES) >= 50


@pytest.mark.parametrize("fx", FIXTURES, ids=lambda f: f.name)
def test_failed_rules_are_exactly_the_expected(fx: Fixture) -> None:
    verdicts = evaluate(analyze(fx.exchange, fx.profile))
    assert [v.message for v in verdicts if v.outcome == "error"] == []
    assert {v.rule.id for v in verdicts if v.outcome == "failed"} == fx.expected_failed


def test_a_verdict_does_not_depend_on_the_selection() -> None:
    """A live run judges every rule once per exchange and reads a selection's verdicts from those (a scenario whose
    capability is unsupported keeps only ALWAYS): each selection must give what judging it alone gives."""
    from conformance.engine.judge import ALWAYS
    from conformance.rules import RULES

    categories = sorted({r.category for r in RULES})
    selections = [ALWAYS] + [frozenset(r.id for r in RULES if r.category == c) for c in categories]
    compared = 0
    for fx in FIXTURES:
        every = evaluate(analyze(fx.exchange, fx.profile))
        for chosen in selections:
            alone = evaluate(analyze(fx.exchange, fx.profile), chosen)
            assert alone == [v for v in every if v.rule.id in chosen], (fx.name, sorted(chosen))
            compared += sum(v.outcome != "not_applicable" for v in alone)
    assert compared > 1000


@pytest.mark.parametrize("fx", FIXTURES, ids=lambda f: f.name)
def test_assembly_matches_the_sidecar(fx: Fixture) -> None:
    got = assembled_json(analyze(fx.exchange, fx.profile))
    assert {k: got.get(k) for k in fx.expected_assembled} == fx.expected_assembled


def test_assemblies_snapshot(snapshot: SnapshotAssertion) -> None:
    assemblies = {fx.name: assembled_json(analyze(fx.exchange, fx.profile)) for fx in FIXTURES}
    assert assemblies == snapshot


def test_seed_examples_are_all_present() -> None:
    names = {fx.name for fx in FIXTURES}
    for wanted in ("seeds/afm-lifecycle", "seeds/afm-tool-call", "seeds/interleaved-two-calls",
                   "seeds/azure-filter-default", "seeds/lmstudio-event-error", "seeds/ollama-generate",
                   "seeds/ollama-chat", "seeds/npu-openai"):
        assert wanted in names


def test_every_fixture_names_its_source() -> None:
    assert [fx.name for fx in FIXTURES if not fx.meta.get("source") or not fx.meta.get("description")] == []
