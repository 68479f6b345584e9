"""The rulebook is well-formed data, and every rule is checked, passed and failed by a fixture."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conformance.checks import CHECKS, _load, evaluate
from conformance.exchange import analyze
from conformance.fixtures import load_all
from conformance.report import rulebook
from conformance.rules import APPLIES, CATEGORIES, LEVELS, RULES, RULES_BY_ID
from conformance.settings import select_rules

SHARED = Path(__file__).resolve().parents[2] / "shared"
SEED_FILES = ("000_9adc55f728b3a6e5.txt", "001_b86e68556766b6cb.txt", "002_018dc7b61835a212.txt",
              "003_b25f797ba83b2388.txt")


def test_at_least_ninety_rules_with_unique_ids() -> None:
    ids = [r.id for r in RULES]
    assert len(ids) >= 90 and len(set(ids)) == len(ids)


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.id)
def test_rule_fields(rule: object) -> None:
    assert re.fullmatch(r"[A-Z]{3,4}-\d{3}", rule.id)  # type: ignore[attr-defined]
    assert rule.category in CATEGORIES and rule.level in LEVELS and rule.applies in APPLIES  # type: ignore[attr-defined]
    source = rule.source  # type: ignore[attr-defined]
    assert any(s in source for s in (*SEED_FILES, "WHATWG", "OpenAI API reference", "RFC 9112", "Ollama API reference",
                                   "Open Responses specification", "Anthropic API reference", "Anthropic docs",
                                   "the agent corpus"))


def test_every_category_has_rules() -> None:
    assert {r.category for r in RULES} == set(CATEGORIES)


@pytest.mark.skipif(not (SHARED / "docs" / "DEVIATIONS.md").exists(), reason="shared/ is not beside the repo")
def test_deviation_refs_exist() -> None:
    text = (SHARED / "docs" / "DEVIATIONS.md").read_text(encoding="utf-8")
    rows = set(re.findall(r"^\| ([A-L]\d+) \|", text, re.M))
    assert [(r.id, ref) for r in RULES for ref in r.refs if ref not in rows] == []


def test_every_rule_has_a_check() -> None:
    _load()
    covered = {r for c in CHECKS for r in c.rules}
    assert [r.id for r in RULES if r.id not in covered] == []


def test_every_rule_passes_and_fails_on_some_fixture() -> None:
    passed: set[str] = set()
    failed: set[str] = set()
    for fx in load_all():
        for verdict in evaluate(analyze(fx.exchange, fx.profile)):
            {"passed": passed, "failed": failed}.get(verdict.outcome, set()).add(verdict.rule.id)
    assert [r.id for r in RULES if r.id not in passed] == []
    assert [r.id for r in RULES if r.id not in failed] == []


def test_select_by_category_and_id() -> None:
    chosen = select_rules(["SSE-002"], ["usage"])
    assert chosen is not None and "SSE-002" in chosen
    assert {RULES_BY_ID[r].category for r in chosen} == {"usage", "framing"}
    assert select_rules([], []) is None


def test_markdown_table_lists_every_rule() -> None:
    md = rulebook.markdown()
    assert all(f"| {r.id} |" in md for r in RULES)


def test_the_site_has_a_page_per_rule_from_the_rulebook() -> None:
    from conformance.docsite import pages

    site = pages()
    index = site["reference/rules/index.md"]
    for r in RULES:
        assert f"[{r.id}]({r.id}.md)" in index, r.id
        page = site[f"reference/rules/{r.id}.md"]
        assert page.startswith(f"# {r.id}: ") and f"**{r.level}**" in page and r.category in page


def test_every_profile_judges_every_fixture_without_a_check_error() -> None:
    from conformance.model.profiles import ALLOWANCES, EXPECTATIONS, PROFILES

    for profile in PROFILES.values():
        assert set(profile.citations()) == profile.allows | profile.expects
        assert all(ALLOWANCES[a] for a in profile.allows) and all(EXPECTATIONS[e] for e in profile.expects)
        for fx in load_all():
            errors = [v.rule.id for v in evaluate(analyze(fx.exchange, profile)) if v.outcome == "error"]
            assert errors == [], (profile.name, fx.name, errors)


def test_the_results_schema_names_every_category() -> None:
    from conformance.results import schema

    enum = schema()["properties"]["checks"]["items"]["properties"]["category"]["enum"]
    assert enum == list(CATEGORIES)


def test_a_verdict_carries_the_rule_it_judged_even_when_the_rulebook_changes(monkeypatch: pytest.MonkeyPatch) -> None:
    # the passed and not_applicable verdicts are made once per rule: a rule replaced since gets verdicts of its own
    import dataclasses

    import conformance.checks.registry as checks

    fixture = next(f for f in load_all() if f.name == "defects/error-in-stream-after-200")  # passes, fails, n/a
    before = {v.rule.id: v for v in evaluate(analyze(fixture.exchange))}
    renamed = tuple(dataclasses.replace(rule, title=rule.title + " (renamed)") for rule in RULES)
    monkeypatch.setattr(checks, "RULES", renamed)
    after = evaluate(analyze(fixture.exchange))
    assert [v.rule for v in after] == list(renamed)
    assert all(v.rule is rule for v, rule in zip(after, renamed, strict=True))
    assert [v.outcome for v in after] == [before[r.id].outcome for r in renamed]


def test_a_precondition_that_raises_is_its_rules_error_not_the_end_of_the_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """A live run evaluates every rule in its worker: a precondition's bug (an SSE answer on Ollama's route had no
    chat watch) gives its check's rules an error verdict and leaves every other verdict as it was."""
    import dataclasses

    import conformance.checks.registry as checks

    checks._load()
    fixture = next(f for f in load_all() if f.name == "defects/error-in-stream-after-200")
    before = {v.rule.id: v.outcome for v in evaluate(analyze(fixture.exchange))}
    target = next(c for c in checks.CHECKS if c.when and any(before[r] in ("passed", "failed") for r in c.rules))

    def broken(a: object) -> bool:
        raise AttributeError("'NoneType' object has no attribute 'events'")

    monkeypatch.setattr(checks, "CHECKS", [dataclasses.replace(c, when=(*c.when, broken)) if c is target else c
                                           for c in checks.CHECKS])
    monkeypatch.setattr(checks, "_PLANS", {})
    after = {v.rule.id: v for v in evaluate(analyze(fixture.exchange))}
    for rid, outcome in before.items():
        if rid in target.rules and outcome != "not_applicable":
            assert after[rid].outcome == "error" and "precondition broken" in after[rid].message, rid
        else:
            assert after[rid].outcome == outcome, rid


def test_each_outcome_outranks_the_one_before_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """An exchange's verdicts start not applicable; a rule a check judged passes; without a response it is skipped
    instead (never passed), unless it judges the absence; a finding fails it, response or not; a check that broke
    makes it an error, findings or not."""
    import dataclasses

    import conformance.checks.registry as checks
    from conformance.checks import ANSWERLESS_RULES, Check, Finding

    checks._load()
    fixture = next(f for f in load_all() if f.name == "defects/error-in-stream-after-200")
    before = {v.rule.id: v.outcome for v in evaluate(analyze(fixture.exchange))}
    passed = [rid for rid, outcome in before.items() if outcome == "passed" and rid not in ANSWERLESS_RULES]
    failed = [rid for rid, outcome in before.items() if outcome == "failed"]
    fails, breaks = passed[0], failed[0]

    def finds(a: object) -> list[Finding]:
        rule = RULES_BY_ID[fails]
        return [Finding(rule.id, rule.level, rule.category, "Received: planted / Expected: none")]

    def raises(a: object) -> list[Finding]:
        raise ValueError("planted")

    monkeypatch.setattr(checks, "CHECKS", [*checks.CHECKS, Check((fails,), finds, ()), Check((breaks,), raises, ())])
    after = {v.rule.id: v for v in evaluate(analyze(fixture.exchange))}
    assert after[fails].outcome == "failed" and "planted" in after[fails].findings[-1].message
    assert after[breaks].outcome == "error" and "raises failed: ValueError: planted" in after[breaks].message
    assert {rid: v.outcome for rid, v in after.items() if rid not in (fails, breaks)} == \
        {rid: o for rid, o in before.items() if rid not in (fails, breaks)}

    unanswered = dataclasses.replace(fixture.exchange, status=None, memo={},
                                     observations=dataclasses.replace(fixture.exchange.observations,
                                                                      aborted="connection refused"))
    cut = {v.rule.id: v for v in evaluate(analyze(unanswered))}
    assert cut[fails].outcome == "failed" and cut[breaks].outcome == "error"
    skipped = [rid for rid, v in cut.items() if v.outcome == "skipped"]
    assert skipped and all("no HTTP response (connection refused)" in cut[rid].message for rid in skipped)
    assert not [rid for rid, v in cut.items() if v.outcome == "passed" and rid not in ANSWERLESS_RULES]
    assert [rid for rid, v in cut.items() if v.outcome == "passed" and rid in ANSWERLESS_RULES]  # they judge the absence


def test_a_rule_table_refuses_a_key_it_does_not_know(monkeypatch: pytest.MonkeyPatch) -> None:
    """The rulebook is data (conformance/rules.toml, each protocol's rules.toml): a misspelt key is an error, never a
    field quietly dropped."""
    from conformance import rules

    monkeypatch.setattr(rules, "_table", lambda package: {"rule": [{"id": "TRN-999", "level": "must", "applies": "both",
                                                                    "title": "t", "source": "s", "refz": ["A1"]}]})
    with pytest.raises(ValueError, match="TRN-999 has unknown keys \\['refz'\\]"):
        rules._rules("conformance")


def test_the_rule_count_of_version_is_the_rulebooks() -> None:
    from conformance.rules import rule_count

    assert rule_count() == len(RULES)
