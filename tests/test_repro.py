"""Reproducers: a short script of what the suite actually did, per scenario kind."""

from __future__ import annotations

import pytest

from conformance.client import Request
from conformance.repro import scenario_script

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
    script = scenario_script(kind, BASE, STREAM, api_key="sk-not-shown")
    assert present in script and absent not in script.replace("'", "")
    assert "sk-not-shown" not in script and "Bearer <redacted>" in script


def test_followup_shows_the_liveness_request() -> None:
    followup = Request(body={"model": "m", "messages": [], "stream": False})
    script = scenario_script("followup", BASE, Request(content=b"{", headers={"Content-Type": "application/json"}),
                             followup=followup)
    first, _, rest = script.partition("\n")
    assert "--data-binary '{'" in first and "must still be answered" in rest and '"stream": false' in rest


def test_a_large_body_is_read_from_its_file() -> None:
    big = Request(body={"model": "m", "messages": [{"role": "user", "content": "x" * 5000}]})
    assert scenario_script("plain", BASE, big, body_file="reproducers/x.json").endswith("@reproducers/x.json")


def test_a_gzipped_body_file_is_unpacked_by_the_script() -> None:
    big = Request(body={"model": "m", "messages": [{"role": "user", "content": "x" * 5000}]})
    script = scenario_script("plain", BASE, big, body_file="out dir/reproducers/x.json.gz")
    assert script.endswith("--data-binary @<(gunzip -c 'out dir/reproducers/x.json.gz')")
