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
        "", "## Capabilities", "", "| capability | supported | how | evidence |", "|---|---|---|---|",
    ]
    for name, cap in target["capabilities"].items():
        lines.append(f"| {name} | {'yes' if cap['supported'] else 'no'} | {cap['source']} | {cap['evidence']} |")
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
