"""The self-test in CI: a representative subset of the defects (one or more per category) and every
legal variation; `nox -s selftest` runs them all."""

from __future__ import annotations

import pytest

pytest.importorskip("mlx_lm", reason="the self-test needs the reference extra")

from conformance.selftest import run_one  # noqa: E402
from reference_server.fault_catalog import BY_NAME, DEFECTS, LEGAL  # noqa: E402

SUBSET = [  # one or more per category, kept short for CI's 20 minutes; `nox -s selftest` runs all 122 (and the
    # slow ones left out here: buffered-to-end, finish-never, max-tokens-ignored, slow-prefill, ...)
    "no-done", "json-content-type", "role-every-delta", "id-per-chunk", "stop-swallowed", "finish-eos",
    "usage-unrequested", "tool-call-in-content", "tool-choice-none-ignored", "think-markup-leaks",
    "response-format-ignored", "error-500", "roundtrip-500", "models-bare-list", "cancel-unknown-200",
    "ollama-no-done", "image-crash",
]
SLOW_LEGAL = {"slow-prefill"}  # about 40 s alone: in `nox -s selftest`


def test_catalogue_size() -> None:
    assert len(DEFECTS) >= 70 and len(LEGAL) >= 12
    assert {f.name for f in DEFECTS}.isdisjoint({f.name for f in LEGAL})


@pytest.mark.parametrize("name", SUBSET)
def test_defect_is_caught_by_an_expected_rule(name: str) -> None:
    fault = BY_NAME[name]
    row = run_one(name, fault.expected, legal=False)
    assert row.error == "" and row.caught_by, f"{name}: not caught by {fault.expected}; failures: {row.extra}"


@pytest.mark.parametrize("name", [f.name for f in LEGAL if f.name not in SLOW_LEGAL])
def test_legal_variation_passes(name: str) -> None:
    row = run_one(name, (), legal=True)
    assert row.error == "" and row.extra == [], f"{name}: must/should failures {row.extra}"
