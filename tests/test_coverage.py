"""docs/seed-coverage.md: every fact cited from its seed, every rule, scenario and fixture real, each fixture
judging one of its fact's rules, each live fact judged in its scenario by the published reference report."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conformance.checks import evaluate
from conformance.exchange import analyze
from conformance.fixtures import FIXTURES_DIR, load
from conformance.fuzz.client_fuzz import COMPARED
from conformance.report.coverage import ABBREVIATED, FACTS, NOT_JUDGED, SEEDS, Fact, examples, render, seed_examples
from conformance.rules import RULES_BY_ID
from conformance.scenarios import BY_NAME

ROOT = Path(__file__).resolve().parents[1]
SEED_DIR = ROOT.parent / "shared" / "seeds"
REFERENCE = json.loads((ROOT / "reports" / "reference" / "results.json").read_text(encoding="utf-8"))
JUDGED = {(r["rule"], s.split("/")[0]) for r in REFERENCE["rules"] for s in r["scenarios"]}  # cancel-endpoint/call


def _flat(text: str) -> str:
    return " ".join(text.split())


# the seeds live beside the repository (../shared/seeds/); a clone without them checks everything but the cues
SEED_TEXT = {k: _flat((SEED_DIR / v).read_text(encoding="utf-8")) for k, v in SEEDS.items()
             if (SEED_DIR / v).exists()}
needs_seeds = pytest.mark.skipif(len(SEED_TEXT) < len(SEEDS), reason="../shared/seeds/ is not beside the repo")


def test_the_site_page_is_generated_from_the_map() -> None:
    from conformance.docsite import pages

    page = pages()["reference/seed-coverage.md"]
    assert page == render() and f"{len(FACTS)} facts: " in page


def test_every_seed_has_facts_and_no_fact_is_listed_twice() -> None:
    assert {f.seed for f in FACTS} == set(SEEDS)
    assert len(FACTS) >= 140
    keys = [(f.seed, _flat(f.cue)) for f in FACTS]
    assert len(keys) == len(set(keys))


@pytest.mark.parametrize("fact", FACTS, ids=lambda f: f"{f.seed}:{_flat(f.cue)[:40]}")
def test_fact(fact: Fact) -> None:
    if fact.seed in SEED_TEXT:
        assert _flat(fact.cue) in SEED_TEXT[fact.seed], "the cue is not in the seed"
    assert fact.rules and all(r in RULES_BY_ID for r in fact.rules)
    assert fact.live or fact.fixtures, "a fact needs a live scenario or a fixture"
    assert all(s in BY_NAME for s in fact.live)
    assert all(c in COMPARED for c in fact.client)
    for name in fact.fixtures:
        fx = load(FIXTURES_DIR / f"{name}.json")
        verdicts = {v.rule.id: v.outcome for v in evaluate(analyze(fx.exchange, fx.profile))}
        shown = {r for r in fact.rules if verdicts.get(r) in ("passed", "failed")}
        if fx.meta.get("observations", {}).get("capability") is None and not shown:
            pytest.fail(f"{name} judges none of {fact.rules}")
        if name.startswith("defects/"):
            assert fx.expected_failed & set(fact.rules), f"{name} fails none of {fact.rules}"
        failing = {r for r in fact.rules if verdicts.get(r) == "failed"}
        assert failing <= fx.expected_failed, f"{name} fails {failing - fx.expected_failed} unexpectedly"
    counter, legal = examples(fact)
    assert counter, f"no fixture of the fact fails one of {fact.rules}: the claim has no counterexample"
    assert legal, f"no fixture of the fact passes {fact.rules} without failing one: the claim has no legal example"
    live = [s for s in fact.live if not BY_NAME[s].opt_in and BY_NAME[s].runs_under("openai")]
    if live and not fact.dialect:  # the reference report (profile openai) judged one of its rules there
        judged = {(r, s) for r in fact.rules for s in live} & JUDGED
        assert judged, f"the reference report judged none of {fact.rules} in {live}"
    if fact.dialect or not live:
        assert fact.fixtures, "a fact the reference report cannot show needs a fixture"


@needs_seeds
def test_every_cue_is_in_its_seed() -> None:
    assert [(f.seed, f.cue) for f in FACTS if _flat(f.cue) not in SEED_TEXT[f.seed]] == []


@needs_seeds
def test_not_judged_statements_are_in_their_seeds() -> None:
    assert [cue for seed, cue, _ in NOT_JUDGED if _flat(cue) not in SEED_TEXT[seed]] == []


def test_every_seed_example_passes_or_says_why_not() -> None:
    """A seed example fixture passes every must and should rule, or its failures are its dialect's own shape (a twin of
    the same bytes passes under that profile), or an abbreviation listed with the exact rules it fails."""
    rows = seed_examples()
    assert [name for name, _, why in rows if why == "UNEXPLAINED"] == []
    listed = {name: rules for name, rules, _ in rows if name in ABBREVIATED}
    assert listed == {name: " ".join(sorted(rules.split())) for name, (rules, _) in ABBREVIATED.items()}


RULE_ID = re.compile(r"\b[A-Z]{2,4}-\d{3}\b")


def test_a_not_judged_entry_names_no_rule() -> None:
    """Issue 60: an entry said "not judged" while naming the rule that judges it (a 504: ERR-024; an in-flight token
    after a cancel: CAN-001). A statement a rule judges is a fact with that rule and its fixtures, not an exception."""
    assert [(seed, cue[:40], RULE_ID.findall(why)) for seed, cue, why in NOT_JUDGED if RULE_ID.search(why)] == []


@pytest.mark.parametrize("fact", [f for f in FACTS if f.live and not f.dialect], ids=lambda f: f"{f.seed}:{_flat(f.cue)[:40]}")
def test_every_live_scenario_of_a_fact_judges_it(fact: Fact) -> None:
    """Each scenario a fact lists judged one of its rules in the reference report (issue 60: error-oversized was
    listed under a rule that never judges it)."""
    live = [s for s in fact.live if not BY_NAME[s].opt_in and BY_NAME[s].runs_under("openai")]
    assert [s for s in live if not {(r, s) for r in fact.rules} & JUDGED] == []


# a fact's claims: HTTP statuses and field or code names (snake_case); what a public reference adds beyond the seed
# is attributed in the fact's text, in parentheses that name it: "(OpenAI: 404 model_not_found)"
CLAIM = re.compile(r"\b[1-5]\d\d\b|\b[a-z]+(?:_[a-z0-9]+)+\b")
ATTRIBUTED = re.compile(r"\((?:OpenAI|Ollama|Anthropic|HTTP|WHATWG):[^)]*\)")
# a section whose heading in the seed is worded otherwise than the map names it
HEADINGS = {("000", "Response headers"): "Response header\tMeaning"}


def _heading(line: str) -> str:
    return re.sub(r"^[#§\s\d.]+", "", line).strip().lower()


def seed_sections(seed: str) -> dict[str, str]:
    """Each section the map names in ``seed``: its text, from its heading to the next named section's."""
    lines = (SEED_DIR / SEEDS[seed]).read_text(encoding="utf-8").split("\n")
    starts = {}
    for name in {f.section for f in FACTS if f.seed == seed}:
        want = _heading(HEADINGS.get((seed, name), name))
        at = next((i for i, line in enumerate(lines) if _heading(line) and _heading(line).startswith(want)), None)
        assert at is not None, f"seed {seed} has no heading for the section {name!r}"
        starts[name] = at
    order = sorted(starts.items(), key=lambda kv: kv[1])
    return {name: "\n".join(lines[at:(order[k + 1][1] if k + 1 < len(order) else len(lines))])
            for k, (name, at) in enumerate(order)}


@needs_seeds
def test_a_fact_claims_no_status_or_field_beyond_its_seed_section() -> None:
    """Issue 60: some fact texts claimed more than their seed section (a status it does not name; a field it does
    not define). Every status and snake_case name in a fact's text stands in its section, or is attributed to the
    public reference it comes from. (A claim in words, not names, is left to review: this guard reads names.)"""
    sections = {seed: seed_sections(seed) for seed in SEEDS}
    over = [(f.seed, f.section, claim) for f in FACTS
            for claim in sorted(set(CLAIM.findall(ATTRIBUTED.sub("", f.fact))))
            if claim not in sections[f.seed][f.section]]
    assert over == []


@pytest.mark.parametrize("fact", FACTS, ids=lambda f: f"{f.seed}:{_flat(f.cue)[:40]}")
def test_a_fact_fails_on_a_fixture_under_its_own_profile(fact: Fact) -> None:
    """Issue 60: a dialect fact's counterexample was the seed's bytes judged under profile openai, which shows only
    that the allowance matters, never that the fact's rule still judges under the dialect. Each fact's rule fails
    on one of its fixtures judged under the fact's own profile (its dialect's, else openai): an allowance exempts
    what the dialect documents, not the whole rule."""
    profile = fact.dialect or "openai"
    failing = []
    for name in fact.fixtures:
        fx = load(FIXTURES_DIR / f"{name}.json")
        failed = {v.rule.id for v in evaluate(analyze(fx.exchange, profile)) if v.outcome == "failed"}
        if failed & set(fact.rules):
            failing.append(name)
    assert failing, f"none of {fact.fixtures} fails {fact.rules} under profile {profile}"
