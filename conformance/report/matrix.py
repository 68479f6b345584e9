"""A compatibility matrix across servers: rules as rows (grouped by category), servers as columns.

Each server is named by its target (base URL and model), with its totals (verdict, failing rules by
level, wall time) and a link to its own report; a differences-only view lists the rules on which
the servers do not agree; a legend says what each mark means.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jinja2 import Environment, select_autoescape

from conformance.rules import CATEGORIES, RULES
from conformance.wire.untrusted import md_cell, printable

MARK = {"passed": "pass", "failed": "FAIL", "skipped": "skip", "error": "ERR", None: "—"}
LEGEND = ("pass: judged and passed in every scenario that showed it; FAIL: failed in at least one scenario "
          "(a failure in the server's baseline counts as pass); skip: not judged (a capability the server lacks, "
          "or no exchange showed it); ERR: the check itself failed; —: not in that run.")


def cell(doc: dict[str, Any], rule_id: str) -> str | None:
    """A rule's overall outcome on one server: failed if any scenario failed it, else passed, else skipped."""
    outcomes = {c["outcome"] for c in doc["checks"] if c["rule"] == rule_id and not c.get("known")}
    if any(c["rule"] == rule_id and c.get("known") for c in doc["checks"]):
        outcomes.add("passed")
    for outcome in ("error", "failed", "passed", "skipped"):
        if outcome in outcomes:
            return outcome
    return None


@dataclass
class Column:
    """One server of the matrix."""

    label: str
    verdict: str
    must: int
    should: int
    advisory: int
    passed: int
    skipped: int
    seconds: float
    link: str | None
    page: str = ""  # servers/<slug>.html: the page a project can link
    badge: str = ""  # servers/<slug>.svg
    failing: tuple[tuple[str, str, str], ...] = ()  # (rule, level, title) of each failing rule


def _column(doc: dict[str, Any], source: Path | None, out: Path) -> Column:
    target = doc.get("target", {})
    cells = {r.id: cell(doc, r.id) for r in RULES}
    levels = {r.id: r.level for r in RULES}
    failing = [r for r, c in cells.items() if c in ("failed", "error")]
    link = None
    if source is not None and (source.parent / "report.html").is_file():
        link = os.path.relpath(source.parent / "report.html", out)
    summary = doc.get("summary", {})
    verdict = str(summary.get("verdict", "fail" if summary.get("failed_by_level", {}).get("must") else "pass"))
    label = str(target.get("label") or f"{target.get('base_url')} · {target.get('model')}")
    runs = source.parent / "RUNS.json" if source is not None else None
    if runs is not None and runs.is_file():  # a peer of `nox -s peers`: named by the server and its version
        try:
            peer = json.loads(runs.read_text(encoding="utf-8"))
            label = f"{peer['title']} {peer.get('version', '')}".strip()
            if target.get("profile", "openai") != "openai":  # judged under its documented dialect
                label += f" (profile {target['profile']})"
        except (ValueError, KeyError, TypeError):
            pass
    titles = {r.id: r.title for r in RULES}
    return Column(label, verdict.upper(),
                  sum(levels[r] == "must" for r in failing), sum(levels[r] == "should" for r in failing),
                  sum(levels[r] == "advisory" for r in failing), sum(c == "passed" for c in cells.values()),
                  sum(c == "skipped" for c in cells.values()), float(doc.get("duration_s", 0.0)), link,
                  failing=tuple(sorted(((r, levels[r], titles[r]) for r in failing),
                                       key=lambda f: (("must", "should", "advisory").index(f[1]), f[0]))))


def write_matrix(docs: list[dict[str, Any]], sources: list[Path] | None, out: Path) -> list[Path]:
    """matrix.md and matrix.html for these results.json documents (``sources``: where each was read)."""
    out.mkdir(parents=True, exist_ok=True)
    paths = sources if sources is not None else [None] * len(docs)
    columns = [_column(d, p, out) for d, p in zip(docs, paths, strict=True)]
    groups = []
    for category in CATEGORIES:
        rows = [(r, [cell(d, r.id) for d in docs]) for r in RULES if r.category == category]
        groups.append((category, [row for row in rows if any(c is not None for c in row[1])]))
    differ = [(r, cells) for _, rows in groups for r, cells in rows if len({MARK[c] for c in cells}) > 1]
    notes = _not_in_matrix(out / "peers.json")
    clients = client_rows(list(paths))
    agents = agent_rows(list(paths), docs, clients)
    env = Environment(autoescape=select_autoescape(default=True, default_for_string=True))
    _server_pages(columns, docs, out, env)  # before the matrix: its rows link each page and badge
    (out / "matrix.md").write_text(printable(_markdown(columns, groups, differ, notes, clients, agents)),
                                   encoding="utf-8")
    html = env.from_string(HTML).render(columns=columns, groups=groups, differ=differ, mark=MARK, legend=LEGEND,
                                        notes=notes, clients=clients, agents=agents)
    (out / "matrix.html").write_text(printable(html), encoding="utf-8")
    return [out / "matrix.md", out / "matrix.html", *(out / c.page for c in columns), *(out / c.badge for c in columns)]


def _client_cell(entry: dict[str, Any] | None) -> str:
    if entry is None:
        return "—"
    verdict = str(entry.get("verdict", ""))
    if verdict == "works with limits":
        return "works (limits: " + ", ".join(str(x.get("what")) for x in entry.get("limits") or []) + ")"
    if verdict == "breaks":
        first = (entry.get("breaks") or [{}])[0]
        return f"BREAKS ({first.get('scenario', '?')}: {', '.join(first.get('fails') or [])})"
    return verdict


def _pinned(entry: dict[str, Any]) -> str:
    """The version a client entry pinned: ``openai==3.57.0`` or ``openai@6.30.1`` gives the number."""
    first = str((entry.get("packages") or [""])[0])
    return first.split("==", 1)[1] if "==" in first else first[1:].rpartition("@")[2] if "@" in first[1:] else first


def client_rows(sources: list[Path | None]) -> list[tuple[str, list[str]]]:
    """A "works with" row per client library, from the clients.json beside each server's results.json (written by
    ``conformance clients``), and for a protocol judged in a run of its own, the clients.json of that run (a
    ``responses`` folder beside it, as ``nox -s peers`` writes it): works, works (limits: ...), BREAKS (the first
    scenario and the rules its stream fails), not checked, or — where the client was not run."""
    per_server: list[dict[str, dict[str, Any]]] = []
    labels: dict[str, str] = {}
    for source in sources:
        found: dict[str, dict[str, Any]] = {}
        for where in ([source.parent / "clients.json", source.parent / "responses" / "clients.json"] if source else []):
            try:
                doc = json.loads(where.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            for entry in doc.get("clients", []) if isinstance(doc, dict) else []:
                if not isinstance(entry, dict) or not isinstance(entry.get("client"), str):
                    continue
                name = entry["client"]
                if name not in found or found[name].get("verdict") == "not checked":
                    found[name] = entry
                labels.setdefault(name, f"{entry.get('label', name)} {_pinned(entry)}")
        per_server.append(found)
    return [(labels[name], [_client_cell(s.get(name)) for s in per_server]) for name in labels]


def _agent_request_cell(doc: dict[str, Any] | None, agent: str) -> str:
    """What a run made of one agent's corpus requests: accepts (n turns), REFUSES the turn and the field, not run
    (with the capability skipped) or —."""
    if doc is None:
        return "—"
    prefix = f"agent-{agent}-"
    statuses = {str(s.get("name")): s.get("status") for s in doc.get("scenarios") or []
                if isinstance(s, dict) and str(s.get("name", "")).startswith(prefix)}
    checks = [c for c in doc.get("checks") or [] if isinstance(c, dict) and c.get("rule") == "AGT-001"
              and str(c.get("scenario", "")).startswith(prefix)]
    refused = [c for c in checks if c.get("outcome") == "failed"]
    if refused:
        first = refused[0]
        turn = str(first.get("scenario", ""))[len(prefix):].split("-", 1)[-1]
        message = str(first.get("message", ""))
        field = message.split(", naming ", 1)[1].split(":", 1)[0] if ", naming " in message else "no field named"
        status = (first.get("evidence") or {}).get("status", "?")
        return f"REFUSES {turn} ({status}, {field})" + (f" and {len(refused) - 1} more" if len(refused) > 1 else "")
    if statuses and all(v == 200 for v in statuses.values()):
        return f"accepts ({len(statuses)} turns)"
    skipped = [c for c in checks if c.get("outcome") == "skipped"]
    if skipped or not statuses:
        why = str(skipped[0].get("message", "")) if skipped else "not in this run"
        return f"not run ({why.split(':', 1)[0][:60]})"  # the capability; its evidence is in the run's report
    return "not answered (" + ", ".join(f"{k[len(prefix):]}: {v}" for k, v in sorted(statuses.items())) + ")"


def agent_rows(sources: list[Path | None], docs: list[dict[str, Any]],
               clients: list[tuple[str, list[str]]]) -> list[tuple[str, list[str]]]:
    """Two rows per agent of the corpus: its requests (AGT-001, from the run, or from the agents/ run beside it as
    ``nox -s peers`` writes it) and its reading of the server's answers (its adapter's "works with" cells)."""
    from conformance.clients import CLIENTS
    from conformance.scenarios.agents import AGENTS, corpus

    versions: dict[str, str] = {}
    for entry in corpus():
        versions.setdefault(entry.agent, entry.version)
    runs: list[dict[str, Any] | None] = []
    for source, doc in zip(sources, docs, strict=True):
        beside = source.parent / "agents" / "results.json" if source is not None else None
        try:
            runs.append(json.loads(beside.read_text(encoding="utf-8")) if beside and beside.is_file() else doc)
        except (OSError, ValueError):
            runs.append(doc)
    by_label = dict(clients)
    rows = []
    for name, agent in AGENTS.items():
        if name not in versions:
            continue
        rows.append((f"{agent.title} {versions[name]}: its requests", [_agent_request_cell(r, name) for r in runs]))
        client = CLIENTS.get(agent.client)
        label = next((lab for lab in by_label if client is not None and lab.startswith(client.label)), None)
        if label is not None:
            rows.append((f"{agent.title}: reads the answers ({label})", by_label[label]))
    return rows


def slug(label: str, taken: set[str]) -> str:
    """A file name for a server's page, from its label (server text: only [a-z0-9-] kept), unique in ``taken``."""
    base = re.sub(r"[^a-z0-9]+", "-", label.lower()).strip("-")[:48].strip("-") or "server"
    name, n = base, 2
    while name in taken:
        name, n = f"{base}-{n}", n + 1
    taken.add(name)
    return name


def _server_pages(columns: list[Column], docs: list[dict[str, Any]], out: Path, env: Environment) -> None:
    """servers/<slug>.html and servers/<slug>.svg for each server: a page and a badge a project can link."""
    from conformance.report.badge import render_badge
    from conformance.results import from_json

    folder = out / "servers"
    folder.mkdir(parents=True, exist_ok=True)
    taken: set[str] = set()
    for column, doc in zip(columns, docs, strict=True):
        name = slug(column.label, taken)
        column.page, column.badge = f"servers/{name}.html", f"servers/{name}.svg"
        badge = render_badge(from_json(doc), column.label)
        (out / column.badge).write_text(badge, encoding="utf-8")
        report = os.path.relpath(out / column.link, folder) if column.link else None
        html = env.from_string(SERVER_PAGE).render(c=column, badge=badge, report=report, legend=LEGEND)
        (out / column.page).write_text(printable(html), encoding="utf-8")


SERVER_PAGE = """<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{{ c.label }}: {{ c.verdict }}</title>
<style>body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:60em;padding:0 1em}.must{color:#b3261e}
.should{color:#8a5a00}.advisory{color:#2a5d9f}</style></head><body>
<h1>{{ c.label }}</h1><p>{{ badge|safe }}</p>
<p><b>{{ c.verdict }}</b>: {{ c.must }} must, {{ c.should }} should and {{ c.advisory }} advisory rules failed;
{{ c.passed }} passed, {{ c.skipped }} skipped; {{ '%.1f' % c.seconds }} s.
{% if report %}<a href="{{ report }}">The full report</a>. {% endif %}<a href="../matrix.html">The matrix</a>.</p>
<p>Link the badge: <code>![chat-conformance]({{ c.badge.split('/')[-1] }})</code></p>
{% if c.failing %}<h2>Failing rules</h2><ul>{% for rule, level, title in c.failing %}<li><span class="{{ level }}">
{{ level }}</span> <b>{{ rule }}</b> {{ title }}</li>{% endfor %}</ul>{% else %}<p>No rule failed.</p>{% endif %}
</body></html>
"""


def _not_in_matrix(peers: Path) -> list[str]:
    """The servers `nox -s peers` could not have here (reports/peers.json beside the matrix), and why."""
    try:
        doc = json.loads(peers.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    if not isinstance(doc, dict):
        return []
    found = doc.get("unavailable")
    unavailable: dict[str, Any] = found if isinstance(found, dict) else {}
    notes = [f"{name}: {why}" for name, why in sorted(unavailable.items())]
    notes += [f"{name}: {entry['error']}" for name, entry in sorted(doc.items())
              if isinstance(entry, dict) and isinstance(entry.get("error"), str)]
    return notes


def _markdown(columns: list[Column], groups: list[Any], differ: list[Any], notes: list[str] | None = None,
              clients: list[tuple[str, list[str]]] | None = None,
              agents: list[tuple[str, list[str]]] | None = None) -> str:
    heads = [f"[{md_cell(c.label)}]({c.link})" if c.link else md_cell(c.label) for c in columns]
    md = ["# Compatibility matrix", "",
          "| server | verdict | must | should | advisory | passed | skipped | wall time | page |",
          "|---|---|---:|---:|---:|---:|---:|---:|---|"]
    md += [f"| {h} | {c.verdict} | {c.must} | {c.should} | {c.advisory} | {c.passed} | {c.skipped} | {c.seconds:.1f} s "
           f"| [![{c.verdict}]({c.badge})]({c.page}) |" for h, c in zip(heads, columns, strict=True)]
    if notes:
        md += ["", "Not in this matrix:", "", *[f"- {n}" for n in notes]]
    md += ["", f"Legend: {LEGEND}", ""]
    if clients:
        md += ["## Works with (client libraries replaying each server's recorded streams: `conformance clients`)", "",
               "| client | " + " | ".join(md_cell(c.label) for c in columns) + " |", "|---|" + "---|" * len(columns)]
        md += [f"| {md_cell(label)} | " + " | ".join(md_cell(x) for x in cells) + " |" for label, cells in clients]
        md += [""]
    if agents:
        md += ["## Agents (the requests real agents send, AGT-001; and whether each agent reads the answers)", "",
               "| agent | " + " | ".join(md_cell(c.label) for c in columns) + " |", "|---|" + "---|" * len(columns)]
        md += [f"| {md_cell(label)} | " + " | ".join(md_cell(x) for x in cells) + " |" for label, cells in agents]
        md += [""]
    md += [f"## Differences ({len(differ)} rules)", ""]
    table_head = ["| rule | level | " + " | ".join(md_cell(c.label) for c in columns) + " |", "|---|---|" + "---|" * len(columns)]
    if differ:
        md += table_head + [f"| {r.id} {r.title} | {r.level} | " + " | ".join(MARK[c] for c in cells) + " |"
                            for r, cells in differ]
    else:
        md.append("The servers agree on every rule.")
    md += ["", "## Every rule", ""] + table_head
    for category, rows in groups:
        md.append(f"| **{category}** | | " + " | ".join("" for _ in columns) + " |")
        md += [f"| {r.id} {r.title} | {r.level} | " + " | ".join(MARK[c] for c in cells) + " |" for r, cells in rows]
    return "\n".join(md) + "\n"


HTML = """<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Compatibility matrix</title>
<style>body{font:13px system-ui,sans-serif;margin:2em}table{border-collapse:collapse;margin-bottom:1.5em}
td,th{border:1px solid #ccc;padding:.2em .5em}.failed,.error{background:#f6d5d3}.passed{background:#d8f0dc}
.skipped{color:#777}th.cat{text-align:left;background:#eee}td.n{text-align:right}.FAIL{color:#b3261e;font-weight:600}
.PASS{color:#1e7b34;font-weight:600}</style></head><body><h1>Compatibility matrix</h1>
<table><tr><th>server</th><th>verdict</th><th>must</th><th>should</th><th>advisory</th><th>passed</th><th>skipped</th>
<th>wall time</th><th>page</th></tr>{% for c in columns %}<tr><td>
{% if c.link %}<a href="{{ c.link }}">{{ c.label }}</a>{% else %}
{{ c.label }}{% endif %}</td><td class="{{ c.verdict }}">{{ c.verdict }}</td><td class="n">{{ c.must }}</td>
<td class="n">{{ c.should }}</td><td class="n">{{ c.advisory }}</td><td class="n">{{ c.passed }}</td>
<td class="n">{{ c.skipped }}</td><td class="n">{{ '%.1f' % c.seconds }} s</td>
<td><a href="{{ c.page }}"><img src="{{ c.badge }}" alt="{{ c.verdict }}"></a></td></tr>{% endfor %}</table>
{% if notes %}<p>Not in this matrix:</p><ul>{% for n in notes %}<li>{{ n }}</li>{% endfor %}</ul>{% endif %}
<p>Legend: {{ legend }}</p>
{% if clients %}<h2>Works with</h2><p>Client libraries replaying each server's recorded streams (conformance clients).</p>
<table><tr><th>client</th>{% for c in columns %}<th>{{ c.label }}</th>{% endfor %}</tr>{% for label, cells in clients %}
<tr><td>{{ label }}</td>{% for x in cells %}<td class="{{ 'failed' if x.startswith('BREAKS') else ('passed' if
x.startswith('works') else 'skipped') }}">{{ x }}</td>{% endfor %}</tr>{% endfor %}</table>{% endif %}
{% if agents %}<h2>Agents</h2><p>The requests real agents send (AGT-001), and whether each agent reads the answers.</p>
<table><tr><th>agent</th>{% for c in columns %}<th>{{ c.label }}</th>{% endfor %}</tr>{% for label, cells in agents %}
<tr><td>{{ label }}</td>{% for x in cells %}<td class="{{ 'failed' if x.startswith(('BREAKS', 'REFUSES')) else
('passed' if x.startswith(('works', 'accepts')) else 'skipped') }}">{{ x }}</td>{% endfor %}</tr>{% endfor %}
</table>{% endif %}
<h2>Differences ({{ differ|length }} rules)</h2>{% if differ %}<table><tr><th>rule</th><th>level</th>
{% for c in columns %}<th>{{ c.label }}</th>{% endfor %}</tr>{% for rule, cells in differ %}<tr>
<td>{{ rule.id }} {{ rule.title }}</td><td>{{ rule.level }}</td>{% for x in cells %}<td class="{{ x or '' }}">
{{ mark[x] }}</td>{% endfor %}</tr>{% endfor %}</table>{% else %}<p>The servers agree on every rule.</p>{% endif %}
<h2>Every rule</h2><table>
<tr><th>rule</th><th>level</th>{% for c in columns %}<th>{{ c.label }}</th>{% endfor %}</tr>
{% for category, rows in groups %}<tr><th class="cat" colspan="{{ columns|length + 2 }}">{{ category }}</th></tr>
{% for rule, cells in rows %}<tr><td>{{ rule.id }} {{ rule.title }}</td><td>{{ rule.level }}</td>
{% for x in cells %}<td class="{{ x or '' }}">{{ mark[x] }}</td>{% endfor %}</tr>{% endfor %}{% endfor %}
</table></body></html>
"""
