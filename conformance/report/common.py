"""What every report shows: per-category counts, the failures with their evidence."""

from __future__ import annotations

from dataclasses import dataclass, field

from conformance.results import CheckEntry, RunResult
from conformance.rules import CATEGORIES, RULES_BY_ID


@dataclass
class CategoryRow:
    category: str
    passed: int = 0
    failed: dict[str, int] = field(default_factory=lambda: {"must": 0, "should": 0, "advisory": 0})
    skipped: int = 0
    errors: int = 0


def by_category(result: RunResult) -> list[CategoryRow]:
    rows = {c: CategoryRow(c) for c in CATEGORIES}
    for entry in result.checks:
        row = rows[entry.category]
        if entry.outcome == "passed" or (entry.outcome == "failed" and entry.known):
            row.passed += 1
        elif entry.outcome == "failed":
            row.failed[entry.level] += 1
        elif entry.outcome == "skipped":
            row.skipped += 1
        else:
            row.errors += 1
    return [row for row in rows.values() if row.passed or sum(row.failed.values()) or row.skipped or row.errors]


def failures(result: RunResult) -> list[CheckEntry]:
    """Failures and errors, most severe first, then by rule and scenario."""
    order = {"must": 0, "should": 1, "advisory": 2}
    bad = [c for c in result.checks if c.outcome in ("failed", "error")]
    return sorted(bad, key=lambda c: (c.known, order[c.level], c.rule, c.scenario))


def rule_title(rule_id: str) -> str:
    return RULES_BY_ID[rule_id].title if rule_id in RULES_BY_ID else rule_id


def verdict(result: RunResult) -> str:
    return "FAIL" if result.failed_gate() else "PASS"
