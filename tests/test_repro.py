"""Reproducers: a short script of what the suite actually did, per scenario kind."""

from __future__ import annotations

import pytest

from conformance.engine.client import Request
from conformance.engine.kinds import KINDS, Script

BASE = "http://127.0.0.1:8080"
STREAM = Request(body={"model": "m", "messages": [], "stream": True}, headers={"X-Request-ID": "conformance-cancel-1"})
CASES = [
    ("plain", "curl -sN http://127.0.0.1:8080/v1/chat/completions", "|"),
    ("http10", "curl -sN --http1.0 ", "&"),
    ("disconnect", "| head -n 1", "&"),
    ("cancel", "/v1/chat/completions/conformance-cancel-1/cancel", "head"),
    ("burst", "for i in $(seq 12); do", "--http1.0"),
]


@pytest.mark.parametrize(("kind", "present", "absent"), CASES, ids=[c[0] for c in CASES])
def test_script_per_kind(kind: str, present: str, absent: str) -> None:
    script = KINDS[kind].script(STREAM, Script(BASE, "sk-not-shown"))
    assert present in script and absent not in script.replace("'", "")
    assert "sk-not-shown" not in script and "Bearer <redacted>" in script


def test_followup_shows_the_liveness_request() -> None:
    script = KINDS["followup"].script(Request(content=b"{", headers={"Content-Type": "application/json"}),
                                      Script(BASE, model="m"))
    first, _, rest = script.partition("\n")
    assert "--data-binary '{'" in first and "must still be answered" in rest and '"stream": false' in rest


def test_a_large_body_is_read_from_its_file() -> None:
    big = Request(body={"model": "m", "messages": [{"role": "user", "content": "x" * 5000}]})
    assert KINDS["plain"].script(big, Script(BASE, body_file="reproducers/x.json")).endswith("@reproducers/x.json")


def test_a_gzipped_body_file_is_unpacked_by_the_script() -> None:
    big = Request(body={"model": "m", "messages": [{"role": "user", "content": "x" * 5000}]})
    script = KINDS["plain"].script(big, Script(BASE, body_file="out dir/reproducers/x.json.gz"))
    assert script.endswith("--data-binary @<(gunzip -c 'out dir/reproducers/x.json.gz')")


def test_every_scenario_names_a_kind_that_exists() -> None:
    from conformance.engine.kinds import kind_of
    from conformance.scenarios import SCENARIOS

    assert {kind_of(sc).name for sc in SCENARIOS} == set(KINDS)  # every kind is used, none is missing


@pytest.mark.parametrize(("kind", "present", "requests"), [
    ("repeat", "the same history again", 2), ("clock", "lasts over a second", 1),
    ("stop-compare", "with its stop sequences", 2), ("cancel-completed", "conformance-cancel-1/cancel", 2)])
def test_the_other_kinds_script_what_they_send(kind: str, present: str, requests: int) -> None:
    script = KINDS[kind].script(STREAM, Script(BASE))
    assert present in script and script.count("curl -sN") == requests


def test_a_body_is_encoded_once_and_a_new_body_anew(monkeypatch: pytest.MonkeyPatch) -> None:
    """Sending, the reproducer and its script each ask for the request's bytes (the oversized one is 16 MiB): one
    encoding serves them all, and a request given another body (``replace``, assignment) is encoded from it."""
    import dataclasses
    import json

    from conformance.model import request

    calls = []
    real = json.dumps

    def counting(value: object, **kwargs: object) -> str:
        calls.append(value)
        return real(value, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(request.json, "dumps", counting)
    req = Request(body={"model": "m", "messages": [{"role": "user", "content": "x" * 5000}]})
    first = req.encoded()
    KINDS["plain"].script(req, Script(BASE, body_file="reproducers/x.json.gz"))
    assert req.encoded() is first and len(calls) == 1
    other = dataclasses.replace(req, body={"model": "n"})
    assert other.encoded() == b'{"model": "n"}' and req.encoded() is first
    req.body = {"model": "o"}
    assert req.encoded() == b'{"model": "o"}' and len(calls) == 3
    assert Request(content=b"{").encoded() == b"{" and Request(method="GET").encoded() is None
