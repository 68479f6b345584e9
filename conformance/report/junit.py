"""JUnit XML: one testsuite per category, one testcase per rule and scenario."""

from __future__ import annotations

from xml.etree import ElementTree as ET

from conformance.report.common import rule_title
from conformance.results import RunResult
from conformance.rules import CATEGORIES, RULES_BY_ID


def _category(rule_id: str) -> str:
    return RULES_BY_ID[rule_id].category if rule_id in RULES_BY_ID else ""


def render_junit(result: RunResult) -> str:
    root = ET.Element("testsuites", name="chat-conformance", time=f"{result.duration_s:.3f}")
    props = ET.SubElement(root, "properties")
    for key in ("version", "ruleset"):
        if key in result.tool:
            ET.SubElement(props, "property", name=f"chat-conformance.{key}", value=str(result.tool[key]))
    gating = ("must", "should") if result.strict else ("must",)
    seconds = {str(s["name"]): float(s.get("elapsed_s") or 0.0) for s in result.scenarios}
    for category in CATEGORIES:
        entries = [c for c in result.checks if c.category == category]
        if not entries:
            continue  # a protocol the server does not serve (or --protocol left out): no empty suite
        suite = ET.SubElement(root, "testsuite", name=category, tests=str(len(entries)))
        failures = skipped = 0
        for entry in entries:
            case = ET.SubElement(suite, "testcase", classname=f"{category}.{entry.rule}",
                                 name=f"{entry.rule} {rule_title(entry.rule)} [{entry.scenario}]",
                                 time=f"{seconds.get(entry.scenario.split('/')[0], 0.0):.3f}")  # the scenario's
            if entry.outcome == "failed" and not entry.known and entry.level in gating:
                failures += 1
                node = ET.SubElement(case, "failure", message=entry.message.split("\n")[0][:300], type=entry.level)
                node.text = f"{entry.message}\n\nreproduce: {entry.reproducer}"
            elif entry.outcome == "error":
                failures += 1
                ET.SubElement(case, "error", message=entry.message[:300])
            elif entry.outcome == "skipped":
                skipped += 1
                ET.SubElement(case, "skipped", message=entry.message[:300])
            elif entry.outcome == "failed":
                out = ET.SubElement(case, "system-out")
                out.text = f"{entry.level} finding{' (known)' if entry.known else ''}: {entry.message}"
        for stale in (s for s in result.stale_baseline if _category(s["rule"]) == category):
            failures += 1
            case = ET.SubElement(suite, "testcase", classname=f"{category}.{stale['rule']}",
                                 name=f"{stale['rule']} {rule_title(stale['rule'])} [{stale['scenario']}] (baseline)")
            ET.SubElement(case, "failure", type="stale-baseline",
                          message=f"known failure in {stale['scenario']} no longer fails: remove it from the baseline")
        suite.set("tests", str(len(suite)))
        suite.set("failures", str(failures))
        suite.set("skipped", str(skipped))
    if result.incomplete is not None:  # the run itself did not finish: a failure of its own
        suite = ET.SubElement(root, "testsuite", name="run", tests="1", failures="1", skipped="0")
        case = ET.SubElement(suite, "testcase", classname="run.complete", name="the run completed within --run-timeout")
        missing = result.incomplete.get("not_run") or []
        ET.SubElement(case, "failure", type="incomplete",
                      message=f"{result.incomplete['reason']}; not run or cut: {', '.join(missing)}"[:300])
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"
