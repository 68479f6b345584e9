"""report.html: one self-contained page (inline CSS, no scripts or remote assets)."""

from __future__ import annotations

from typing import Any

from jinja2 import Environment, select_autoescape

from conformance.report.common import by_category, not_judged, rule_counts, run_notes, triage, verdict
from conformance.results import RunResult

TEMPLATE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<title>chat-conformance: {{ verdict }} {{ target.base_url }}</title>
<style>
body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:70em;padding:0 1em;color:#1b1b1b}
h1 .v{padding:.1em .5em;border-radius:.3em;color:#fff;background:{{ '#b3261e' if verdict == 'FAIL' else '#1e7b34' }}}
table{border-collapse:collapse;margin:.5em 0 1.5em}td,th{border:1px solid #ccc;padding:.25em .6em;text-align:left}
td.n{text-align:right}.must{color:#b3261e;font-weight:600}.should{color:#8a5a00}.advisory{color:#2a5d9f}
details{border:1px solid #ddd;border-radius:.3em;margin:.4em 0;padding:.3em .7em}summary{cursor:pointer}
pre{background:#f6f6f6;padding:.6em;overflow-x:auto;white-space:pre-wrap;word-break:break-all}
.known{opacity:.6}.small{color:#555;font-size:.92em}.failing ol{margin:.3em 0 1em;padding-left:1.6em}
.failing a{color:inherit}.pass{color:#1e7b34;font-weight:600}.caps{margin:.5em 0 1em}
</style></head><body>
<h1><span class="v">{{ verdict }}</span> chat-conformance report</h1>
<p>Target <code>{{ target.base_url }}</code>, model <code>{{ target.model }}</code>, profile
<code>{{ target.profile }}</code>{% if strict %}, strict{% endif %}. {{ tool.name }} {{ tool.version }}{% if tool.ruleset %}
(rule set {{ tool.ruleset }}){% endif %},
started {{ started_at }}, {{ '%.1f' % duration_s }} s.</p>
<p class="headline"><b>{{ rules.judged }} rules judged: {{ rules.passed }} passed, {{ rules.failed }} failed</b>
({{ rules.must }} must, {{ rules.should }} should, {{ rules.advisory }} advisory){% if rules.skipped %},
{{ rules.skipped }} skipped{% endif %}{% if rules.error %}, {{ rules.error }} errors{% endif %}.
<span class="small">Across {{ summary.passed + summary.failed + summary.skipped + summary.errors }} checks (a rule in
each scenario that shows it): {{ summary.passed }} passed, {{ summary.failed }} failed.</span></p>
{% for note in notes %}<p class="{{ 'must' if note.startswith('INCOMPLETE') else '' }}">{{ note }}</p>{% endfor %}
{% if target.capabilities %}<p class="caps"><a href="#capabilities">Capabilities</a>:
{% for name, cap in target.capabilities.items() %}{{ name }} <b>{{ 'not probed' if cap.source == 'not probed' else 'yes'
if cap.supported else 'no' }}</b>{{ ', ' if not loop.last }}{% endfor %}.</p>{% endif %}
{% if fails %}<div class="failing"><h2>Failing rules ({{ fails|length }})</h2><ol>
{% for f in fails %}<li><a href="#rule-{{ f.rule }}"><span class="{{ f.level }}">{{ f.level }}</span> <b>{{ f.rule }}</b>
{{ f.title }}</a> <span class="small">in {{ f.where }}{% if f.known %} (known){% elif not f.gating %}
(does not fail the run){% endif %}</span></li>
{% endfor %}</ol></div>{% else %}<p class="pass">No rule failed.</p>{% endif %}
<h2 id="failures">Failures ({{ fails|length }} rules)</h2>
{% for f in fails %}<details id="rule-{{ f.rule }}" class="{{ 'known' if f.known else '' }}"
{% if f.level == 'must' and f.gating %} open{% endif %}><summary><span class="{{ f.level }}">{{ f.level }}</span>
<b>{{ f.rule }}</b> {{ f.title }} <code>[{{ f.where }}]</code>{% if f.known %} (known){% elif not f.gating %}
(does not fail the run){% endif %}</summary>
<p>Source: {{ f.source }}. Failed in {{ f.scenarios|length }} scenario(s): {{ f.where }}.</p>
<pre>{{ f.first.message }}</pre>
{% set ev = f.first.evidence or {} %}{% if ev.status is not none or ev.headers %}<p>Response: status {{ ev.status }}
{% for k, v in (ev.headers or {}).items() %}; {{ k }}: {{ v }}{% endfor %}</p>{% endif %}
{% if ev.excerpt %}<p>Evidence ({{ f.first.scenario }}): event {{ ev.event_index }}, byte {{ ev.byte_offset }}</p>
<pre>{{ ev.excerpt }}</pre>{% endif %}
<p>Reproduce ({{ f.first.scenario }}):</p><pre>{{ f.first.reproducer }}</pre></details>
{% else %}<p>None.</p>{% endfor %}
<h2>Rules by category</h2>
<table><tr><th>rules of</th><th>passed</th><th>must</th><th>should</th><th>advisory</th><th>skipped</th></tr>
{% for row in rows %}<tr><td>{{ row.category }}</td><td class="n">{{ row.passed }}</td>
<td class="n must">{{ row.failed.must or '' }}</td><td class="n should">{{ row.failed.should or '' }}</td>
<td class="n advisory">{{ row.failed.advisory or '' }}</td><td class="n">{{ row.skipped or '' }}</td></tr>
{% endfor %}</table>
{% if target.capabilities %}<h2 id="capabilities">Capabilities</h2>
<table><tr><th>capability</th><th>supported</th><th>how</th><th>evidence</th></tr>
{% for name, cap in target.capabilities.items() %}<tr><td>{{ name }}</td>
<td>{{ 'not probed' if cap.source == 'not probed' else 'yes' if cap.supported else 'no' }}</td>
<td>{{ cap.source }}</td><td>{{ cap.evidence }}</td></tr>{% endfor %}</table>{% endif %}
{% if target.features %}<h2>Feature variants</h2>
<table><tr><th>variant</th><th>state</th><th>scenario</th><th>evidence</th></tr>
{% for name, f in target.features.items() %}<tr><td>{{ name }}</td><td>{{ f.state }}</td><td>{{ f.scenario }}</td>
<td>{{ f.evidence }}</td></tr>{% endfor %}</table>{% endif %}
{% if clients %}<h2>Works with (client libraries replaying this run's streams)</h2>
<table><tr><th>client</th><th>version</th><th>verdict</th><th>detail</th></tr>
{% for c in clients %}<tr><td>{{ c.label }}</td><td>{{ c.version }}</td><td>{{ c.verdict }}</td>
<td>{{ c.reason }}</td></tr>{% endfor %}</table>{% endif %}
{% if stale %}<h2>Stale baseline entries</h2><ul>{% for s in stale %}<li>{{ s.rule }} [{{ s.scenario }}]</li>
{% endfor %}</ul>{% endif %}
{% if streams %}<h2>Streams</h2>
<p>When each stream's bytes arrived (grey: waiting for the first byte; a shaded band: a pause of a second or
more, information rather than a failure; a red line: everything at once, buffered to the end).</p>
<table><tr><th>scenario</th><th>first byte</th><th>reads</th><th>widest gap</th><th>timeline</th></tr>
{% for s in streams %}<tr><td>{{ s.name }}</td><td class="n">{{ '%.0f' % (s.info.ttfb * 1000) }} ms</td>
<td class="n">{{ s.info.reads }}</td><td class="n">{{ '%.0f' % (s.info.gap * 1000) }} ms</td>
<td>{{ s.svg|safe }}</td></tr>{% endfor %}</table>{% endif %}
{% if skipped %}<h2>Skipped and unsupported ({{ skipped|length }} rules)</h2>
<table><tr><th>rule</th><th>level</th><th>why</th></tr>{% for n in skipped %}<tr><td>{{ n.rule }} {{ n.title }}</td>
<td>{{ n.level }}</td><td>{{ n.reason }}</td></tr>{% endfor %}</table>{% endif %}
</body></html>
"""


def _streams(result: RunResult) -> list[dict[str, Any]]:
    from conformance.report.timeline import describe, svg

    return [{"name": s["name"], "svg": svg(s["timeline"], s.get("elapsed_s") or 0.0),
             "info": describe(s["timeline"], s.get("elapsed_s") or 0.0)}
            for s in result.scenarios if s.get("timeline")]


def render_html(result: RunResult) -> str:
    env = Environment(autoescape=select_autoescape(default=True, default_for_string=True))
    page = env.from_string(TEMPLATE)
    return page.render(verdict=verdict(result), target=result.target, tool=result.tool, strict=result.strict,
                       started_at=result.started_at, duration_s=result.duration_s, summary=result.summary(),
                       rules=rule_counts(result),
                       rows=by_category(result), fails=triage(result), skipped=not_judged(result),
                       streams=_streams(result), notes=run_notes(result),
                       stale=result.stale_baseline, clients=result.clients)
