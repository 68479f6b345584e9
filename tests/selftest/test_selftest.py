"""The self-test in CI: a representative subset of the defects and of the legal variations (each is a whole
run against a broken server, so CI keeps to eleven and nine); `nox -s selftest` runs them all."""

from __future__ import annotations

import pytest

pytest.importorskip("mlx_lm", reason="the self-test needs the reference extra")

from conformance.selftest import run_one  # noqa: E402
from reference_server.fault_catalog import BY_NAME, DEFECTS, LEGAL  # noqa: E402

SUBSET = [  # one per group, kept short for CI's 20 minutes (each is a whole run against a broken server);
    # `nox -s selftest` runs all 122 defects and every legal variation
    "no-done", "json-content-type", "role-every-delta", "stop-swallowed", "usage-unrequested",
    "tool-call-in-content", "response-format-ignored", "roundtrip-500", "models-bare-list", "ollama-no-done",
    "responses-two-terminals",
]
LEGAL_IN_CI = {"data-without-space", "one-byte-per-write", "whole-tool-call", "reasoning-key", "lmstudio-errors",
               "embedding-listed-first", "strict-dialect", "extra-fields", "responses-stateless"}


def test_catalogue_size() -> None:
    assert len(DEFECTS) >= 70 and len(LEGAL) >= 12
    assert {f.name for f in DEFECTS}.isdisjoint({f.name for f in LEGAL})


@pytest.mark.parametrize("name", SUBSET)
def test_defect_is_caught_by_an_expected_rule(name: str) -> None:
    fault = BY_NAME[name]
    row = run_one(name, fault.expected, legal=False)
    assert row.error == "" and row.caught_by, f"{name}: not caught by {fault.expected}; failures: {row.extra}"


@pytest.mark.parametrize("name", [f.name for f in LEGAL if f.name in LEGAL_IN_CI])
def test_legal_variation_passes(name: str) -> None:
    row = run_one(name, (), legal=True)
    assert row.error == "" and row.extra == [], f"{name}: must/should failures {row.extra}"
