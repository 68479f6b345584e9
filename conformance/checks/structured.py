"""Structured output: json_object and json_schema answers parse, are unfenced and match."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from conformance.checks.conditions import response_format, structured
from conformance.checks.registry import Finding, check, finding, schema_problem, short
from conformance.exchange import Analysis


def _schema(a: Analysis) -> tuple[Any, bool]:
    spec = a.request["response_format"].get("json_schema")
    if not isinstance(spec, dict):
        return None, False
    return spec.get("schema"), spec.get("strict") is True


def _complete(a: Analysis) -> list[str]:
    """Contents that should be whole JSON: not cut by length or by a stop sequence the request set, not
    refused, not an error."""
    if a.assembled.error is not None or a.request.get("stop"):
        return []
    return [c.content for c in a.assembled.choices.values()
            if c.finish_reason not in ("length", "content_filter") and not c.refusal]


def _bound(a: Analysis) -> bool:
    """A strict schema binds the answer unless the server declared it best-effort (seed 000's
    X-Grammar-Constraints: downgraded): then it guides, as without strict, and STR-004 judges it."""
    from conformance.checks.dialects import downgraded

    return bool(_schema(a)[1]) and not downgraded(a)


@check("STR-001", "STR-002", "STR-003", "STR-004", "STR-005", when=(structured,))
def structured_content(a: Analysis) -> Iterator[Finding]:
    kind = response_format(a)
    for choice in a.assembled.choices.values():
        if not choice.content and choice.reasoning.strip().startswith(("{", "[")):
            yield finding(a, "STR-005", "the JSON answer in the reasoning channel, content empty",
                          "the JSON in content")
    for content in _complete(a):
        if content.lstrip().startswith("```"):
            yield finding(a, "STR-002", f"content {short(content, 40)}", "bare JSON, no markdown fence")
        try:
            value = json.loads(content)
        except ValueError:
            value = None
            rule = "STR-001" if kind == "json_object" else ("STR-003" if _bound(a) else "STR-004")
            yield finding(a, rule, f"content {short(content)} that is not JSON", "valid JSON")
            continue
        if kind == "json_object" and not isinstance(value, dict):
            yield finding(a, "STR-001", f"JSON {short(value)}", "a JSON object")
        if kind == "json_schema":
            schema, strict = _schema(a)
            strict = strict and _bound(a)
            if isinstance(schema, dict):
                problem = schema_problem(value, schema)
                if problem is not None:
                    yield finding(a, "STR-003" if strict else "STR-004", f"{short(value)}: {problem}",
                                  "content that matches the schema")
