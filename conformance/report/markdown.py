"""report.md: the summary, the capabilities, and every failure with its evidence."""

from __future__ import annotations

from conformance.report.common import by_category, failures, rule_title, verdict
from conformance.results import RunResult


def render_markdown(result: RunResult) -> str:
    target = result.target
    summary = result.summary()
    lines = [
        f"# chat-conformance report: {verdict(result)}", "",
        f"- Target: `{target['base_url']}`, model `{target['model']}`, profile `{target['profile']}`"
        f"{', strict' if result.strict else ''}",
        f"- Tool: {result.tool['name']} {result.tool['version']}; started {result.started_at}; "
        f"{result.duration_s:.1f} s",
        f"- Checks: {summary['passed']} passed, {summary['failed']} failed "
        f"({summary['failed_by_level']['must']} must, {summary['failed_by_level']['should']} should, "
        f"{summary['failed_by_level']['advisory']} advisory), {summary['skipped']} skipped, {summary['errors']} errors",
    ]
    if target["capabilities"]:
        lines += ["", "## Capabilities", "", "| capability | supported | how | evidence |", "|---|---|---|---|"]
    for name, cap in target["capabilities"].items():
        lines.append(f"| {name} | {'yes' if cap['supported'] else 'no'} | {cap['source']} | {cap['evidence']} |")
    generated = [s for s in result.scenarios if "examples" in s]  # a conformance fuzz run
    if generated:
        lines += ["", "## Generated requests", "", "| kind | examples | requests (with shrinking) | answers |",
                  "|---|---:|---:|---|"]
        for s in generated:
            answers = ", ".join(f"{k}: {v}" for k, v in sorted(s.get("statuses", {}).items()))
            lines.append(f"| {s['name']} | {s['examples']} | {s['requests']} | {answers} |")
        lines.append(f"\nHypothesis seed {generated[0].get('seed')}: `conformance fuzz --seed "
                     f"{generated[0].get('seed')}` repeats the run.")
    lines += ["", "## By category", "", "| category | passed | must | should | advisory | skipped |",
              "|---|---:|---:|---:|---:|---:|"]
    for row in by_category(result):
        lines.append(f"| {row.category} | {row.passed} | {row.failed['must']} | {row.failed['should']} | "
                     f"{row.failed['advisory']} | {row.skipped} |")
    if result.stale_baseline:
        lines += ["", "## Stale baseline entries (now passing: remove them)", ""]
        lines += [f"- {s['rule']} [{s['scenario']}]" for s in result.stale_baseline]
    lines += ["", "## Failures", ""]
    for entry in failures(result):
        known = " (known, in the baseline)" if entry.known else ""
        lines += [f"### {entry.rule} ({entry.level}) {rule_title(entry.rule)} [{entry.scenario}]{known}", ""]
        lines += ["```text", entry.message, "```"]
        ev = entry.evidence or {}
        if ev.get("excerpt"):
            lines += [f"Evidence: event {ev.get('event_index')}, byte {ev.get('byte_offset')}:", "",
                      "```text", ev["excerpt"], "```"]
        lines += ["Reproduce:", "", "```sh", entry.reproducer, "```", ""]
    if not failures(result):
        lines.append("None.")
    return "\n".join(lines) + "\n"
