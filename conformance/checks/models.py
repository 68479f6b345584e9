"""Model listing: GET /v1/models, as ../shared/seeds/003 §6 and the OpenAI reference describe it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from conformance.checks.conditions import headers_known
from conformance.checks.registry import Finding, check, finding, short
from conformance.exchange import Analysis


def _models(a: Analysis) -> bool:
    return a.exchange.endpoint == "models" and a.exchange.method == "GET"


def _entries(a: Analysis) -> list[Any]:
    body = a.json_body
    data = body.get("data") if isinstance(body, dict) else None
    return data if isinstance(data, list) else []


@check("MOD-001", "MOD-002", "MOD-006", when=(_models,))
def listing(a: Analysis) -> Iterator[Finding]:
    wrong_type = headers_known(a) and a.content_type != "application/json"
    if a.exchange.status != 200 or wrong_type or a.format != "json":
        yield finding(a, "MOD-001", f"status {a.exchange.status}, Content-Type {a.content_type!r}",
                      "200 with a JSON body")
        return
    body = a.json_body
    if not isinstance(body, dict) or not isinstance(body.get("data"), list):
        yield finding(a, "MOD-002", f"body {short(body)}", '{"data": [...]} (seed 003 §6)', offset=0)
    elif body.get("object") != "list":
        yield finding(a, "MOD-006", f"object {short(body.get('object'))}", '"object": "list" (the OpenAI reference)')


@check("MOD-009", when=(_models, lambda a: a.success and a.format == "json" and isinstance(a.json_body, dict)
                        and isinstance(a.json_body.get("data"), list)))
def not_empty(a: Analysis) -> Iterator[Finding]:
    if a.json_body["data"] == []:
        yield finding(a, "MOD-009", '"data": [] while the server answers chat', "the model it serves, listed",
                      remedy="Clients pick a model from this list (seed 003 §6); an empty one leaves them none.")


@check("MOD-003", "MOD-004", "MOD-005", when=(_models, lambda a: a.success and bool(_entries(a))))
def entries(a: Analysis) -> Iterator[Finding]:
    ids: list[str] = []
    reported: set[str] = set()
    for entry in _entries(a):
        ident = entry.get("id") if isinstance(entry, dict) else None
        if not isinstance(ident, str) or not ident:
            yield finding(a, "MOD-003", f"entry {short(entry)}", "a non-empty string id")
            return
        ids.append(ident)
        ok = (entry.get("object") == "model" and isinstance(entry.get("created"), int)
              and isinstance(entry.get("owned_by"), str))
        if not ok and "MOD-004" not in reported:
            reported.add("MOD-004")
            yield finding(a, "MOD-004", f"entry {short(entry)}", "object: model, created (int), owned_by (str)")
    if len(set(ids)) != len(ids):
        yield finding(a, "MOD-005", f"ids {ids}", "each id once")
