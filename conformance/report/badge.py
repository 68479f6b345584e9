"""badge.svg: a compatibility badge for a run, in the flat style READMEs link (shields.io's layout), self-contained.

    [chat-conformance | PASS 157/166]   green: no gating failure
    [chat-conformance | FAIL 10 must]   red: must failures (or an incomplete run)

The label is the run's ``--label`` when it has one; the widths come from a fixed per-character estimate of
Verdana 11px, so the badge needs no font metrics at render time.
"""

from __future__ import annotations

from html import escape

from conformance.report.common import rule_counts
from conformance.results import RunResult
from conformance.wire.untrusted import one_line

GREEN, RED, AMBER, GREY = "#2e7d32", "#c62828", "#b26a00", "#555"
NARROW = set("fijlrtI1.,:;|!' ")
WIDE = set("mwMW@%")


def _width(text: str) -> int:
    """An estimate of the text's width in Verdana 11px, in pixels."""
    return sum(4 if c in NARROW else 10 if c in WIDE else 7 for c in text) + 10


def message(result: RunResult) -> tuple[str, str]:
    """The badge's right half and its colour."""
    counts = rule_counts(result)
    if result.incomplete is not None:
        return "incomplete", RED
    if counts["error"]:
        return f"FAIL {counts['error']} errors", RED
    if result.failed_gate():
        must = counts["must"]
        return (f"FAIL {must} must" if must else f"FAIL {counts['should']} should"), RED
    judged = counts["passed"] + counts["failed"]
    if counts["should"]:
        return f"PASS {counts['passed']}/{judged}, {counts['should']} should", AMBER
    return f"PASS {counts['passed']}/{judged}", GREEN


def render_badge(result: RunResult, label: str | None = None) -> str:
    """The SVG text of the badge."""
    left = one_line(label or str(result.target.get("label") or "chat-conformance"))[:60]
    right, colour = message(result)
    lw, rw = _width(left), _width(right)
    total = lw + rw
    title = escape(f"{left}: {right}")
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{total}" height="20" role="img" aria-label="{title}">'
            f"<title>{title}</title>"
            f'<linearGradient id="s" x2="0" y2="100%"><stop offset="0" stop-color="#bbb" stop-opacity=".1"/>'
            f'<stop offset="1" stop-opacity=".1"/></linearGradient>'
            f'<clipPath id="r"><rect width="{total}" height="20" rx="3" fill="#fff"/></clipPath>'
            f'<g clip-path="url(#r)"><rect width="{lw}" height="20" fill="{GREY}"/>'
            f'<rect x="{lw}" width="{rw}" height="20" fill="{colour}"/>'
            f'<rect width="{total}" height="20" fill="url(#s)"/></g>'
            f'<g fill="#fff" text-anchor="middle" font-family="Verdana,Geneva,DejaVu Sans,sans-serif" '
            f'font-size="11">'
            f'<text x="{lw / 2:.1f}" y="15" fill="#010101" fill-opacity=".3">{escape(left)}</text>'
            f'<text x="{lw / 2:.1f}" y="14">{escape(left)}</text>'
            f'<text x="{lw + rw / 2:.1f}" y="15" fill="#010101" fill-opacity=".3">{escape(right)}</text>'
            f'<text x="{lw + rw / 2:.1f}" y="14">{escape(right)}</text></g></svg>\n')
