"""What every report shows: per-category counts, the failures with their evidence."""

from __future__ import annotations

from dataclasses import dataclass, field

from conformance.results import CheckEntry, RunResult
from conformance.rules import CATEGORIES, RULES_BY_ID, cite
from conformance.scenarios import BY_NAME, route_needed


@dataclass
class CategoryRow:
    category: str
    passed: int = 0
    failed: dict[str, int] = field(default_factory=lambda: {"must": 0, "should": 0, "advisory": 0})
    skipped: int = 0
    errors: int = 0


def by_category(result: RunResult) -> list[CategoryRow]:
    """Rules, not checks, per category: each rule counted once, by its verdict across every scenario (what the
    plugin's tests, results.json's rules and the exit code read)."""
    rows = {c: CategoryRow(c) for c in CATEGORIES}
    for verdict in result.rule_verdicts():
        row = rows[verdict.category]
        outcome = verdict.outcome.value
        if outcome == "passed":
            row.passed += 1
        elif outcome == "failed":
            row.failed[verdict.level.value] += 1
        elif outcome == "skipped":
            row.skipped += 1
        else:
            row.errors += 1
    return [row for row in rows.values() if row.passed or sum(row.failed.values()) or row.skipped or row.errors]


def rules_failed_line(result: RunResult) -> str:
    """"3 rules failed: 2 must, 1 should (1 gating)", or "no rule failed", with how many passed and were skipped."""
    counts = rule_counts(result)
    checks = result.summary()
    judged = (f"{counts['passed']} passed, {counts['skipped']} skipped of {counts['judged']} rules "
              f"({checks['passed']} checks passed, {checks['failed']} failed: a rule in each scenario that shows it)")
    errors = f"; {counts['error']} rule(s) errored in their check" if counts["error"] else ""
    if not counts["failed"]:
        return f"no rule failed{errors}; {judged}"
    levels = ", ".join(f"{counts[level]} {level}" for level in ("must", "should", "advisory") if counts[level])
    return f"{counts['failed']} rule{'s' if counts['failed'] != 1 else ''} failed: {levels}{errors}; {judged}"


def failures(result: RunResult) -> list[CheckEntry]:
    """Failures and errors, most severe first, then by rule and scenario."""
    order = {"must": 0, "should": 1, "advisory": 2}
    bad = [c for c in result.checks if c.outcome in ("failed", "error")]
    return sorted(bad, key=lambda c: (c.known, order[c.level], c.rule, c.scenario))


def rule_title(rule_id: str) -> str:
    return RULES_BY_ID[rule_id].title if rule_id in RULES_BY_ID else rule_id


def verdict(result: RunResult) -> str:
    return "FAIL" if result.failed_gate() else "PASS"


def run_notes(result: RunResult) -> list[str]:
    """What the summary says besides the counts: an incomplete run, and the tokens the run asked for and got."""
    notes = []
    if result.incomplete is not None:
        missing = result.incomplete.get("not_run") or []
        notes.append(f"INCOMPLETE: {result.incomplete['reason']}; {len(missing)} scenario(s) not run or cut: "
                     f"{where(missing)} (the run fails; "
                     f"{_incomplete_hint(str(result.incomplete['reason']))})")
    tolerated = sorted({c.rule for c in result.checks if c.outcome == "failed" and c.known})
    if tolerated:  # a baseline run that passes still says what it did not fail on
        count = sum(1 for c in result.checks if c.outcome == "failed" and c.known)
        notes.append(f"baseline: {count} known failure(s) tolerated, of {len(tolerated)} rule(s): {where(tolerated)}")
    retried = [s["name"] for s in result.scenarios if s.get("retried")]
    if retried:
        notes.append(f"retried: {len(retried)} scenario(s) sent again (a 429 with Retry-After waited out, or a lost "
                     f"connection sent again alone), not judged on the first answer: {where(retried)}")
    long = [s for s in result.scenarios if "beyond the server's context" in str(s.get("not_sent") or "")]
    unsent = [s for s in result.scenarios if s.get("not_sent") and s not in long]
    if unsent:
        needed = {route_needed(BY_NAME[str(s["name"])]) for s in unsent if str(s["name"]) in BY_NAME}
        routes = sorted(f"capability {route} unsupported" for route in needed if route)
        notes.append(f"not sent: {len(unsent)} scenario(s) whose route is not served ({'; '.join(routes)}; "
                     f"--expect sends them): {where([str(s['name']) for s in unsent])}")
    if long:
        notes.append(f"not sent: {len(long)} scenario(s) whose prompt is beyond the context the server states, not "
                     f"judged: {where([str(s['name']) for s in long])}")
    t = result.tokens
    if t:
        extra = [f"{t['uncapped']} request(s) without a cap"] if t.get("uncapped") else []
        if t.get("estimated"):
            extra.append(f"{t['estimated']} answer(s) without usage, counted by chunks")
        notes.append(f"completion tokens: asked for {t['asked']:,}, received {t['received']:,}"
                     + (f" ({'; '.join(extra)})" if extra else ""))
    return notes


SHOWN_SCENARIOS = 3


def where(scenarios: list[str] | tuple[str, ...], limit: int = SHOWN_SCENARIOS) -> str:
    """The first few scenarios, then "and N more"."""
    more = len(scenarios) - limit
    return ", ".join(scenarios[:limit]) + (f" and {more} more" if more > 0 else "")


@dataclass
class RuleFailure:
    """One failing rule, once: the scenarios it failed in and the evidence of the first."""

    rule: str
    title: str
    level: str
    source: str
    gating: bool
    known: bool  # every failure of it is in the baseline
    scenarios: list[str]
    first: CheckEntry

    @property
    def where(self) -> str:
        return where(self.scenarios)


@dataclass
class NotJudged:
    """A rule that was skipped (or a capability the server does not have), with the reason."""

    rule: str
    title: str
    level: str
    reason: str


def triage(result: RunResult) -> list[RuleFailure]:
    """Failures grouped by rule: gating ones first, then by level and id."""
    order = {"must": 0, "should": 1, "advisory": 2}
    gating = {v.rule for v in result.rule_verdicts() if v.gating}
    grouped: dict[str, list[CheckEntry]] = {}
    for entry in result.checks:
        if entry.outcome in ("failed", "error"):
            grouped.setdefault(entry.rule, []).append(entry)
    out = []
    for rule_id, entries in grouped.items():
        rule = RULES_BY_ID.get(rule_id)
        unknown = [e for e in entries if not e.known]
        first = (unknown or entries)[0]
        out.append(RuleFailure(rule_id, rule_title(rule_id), first.level, cite(rule.source) if rule else "",
                               rule_id in gating, not unknown, list(dict.fromkeys(e.scenario for e in entries)),
                               first))
    return sorted(out, key=lambda f: (not f.gating, f.known, order.get(f.level, 3), f.rule))


def not_judged(result: RunResult) -> list[NotJudged]:
    """Every rule the run skipped, with why (an unsupported capability, no exchange that shows it)."""
    return [NotJudged(v.rule, rule_title(v.rule), v.level.value, v.message) for v in result.rule_verdicts()
            if v.outcome == "skipped"]


def capability_state(cap: dict[str, object]) -> str:
    """yes, no, or "not probed" (a --rule/--category/--scenario run that did not run its probe)."""
    if cap.get("source") == "not probed":
        return "not probed"
    return "yes" if cap.get("supported") else "no"


def rule_counts(result: RunResult) -> dict[str, int]:
    """Rules, not checks: how many were judged, passed, failed (by level), skipped, errored."""
    verdicts = result.rule_verdicts()
    failed = [v for v in verdicts if v.outcome.value == "failed"]
    return {"judged": len(verdicts), "passed": sum(v.outcome.value == "passed" for v in verdicts),
            "failed": len(failed), "skipped": sum(v.outcome.value == "skipped" for v in verdicts),
            "error": sum(v.outcome.value == "error" for v in verdicts),
            **{level: sum(v.level.value == level for v in failed) for level in ("must", "should", "advisory")}}


def _incomplete_hint(reason: str) -> str:
    if reason.startswith("interrupted"):
        return "interrupted by Ctrl-C; run again for a verdict"
    if "stopped answering" in reason:
        return "check the server"
    if "ran to the suite's limits" in reason:
        return "check the server, or raise --timeout or --max-body if its answers are that long"
    if "(-x)" in reason:
        return "-x stopped it at the first failure"
    return "raise --run-timeout"
