"""The self-test in CI: a representative subset of the defects (one or more per category) and every
legal variation; `nox -s selftest` runs them all."""

from __future__ import annotations

import pytest

pytest.importorskip("mlx_lm", reason="the self-test needs the reference extra")

from conformance.selftest import run_one  # noqa: E402
from reference_server.fault_catalog import BY_NAME, DEFECTS, LEGAL  # noqa: E402

SUBSET = [  # one or more per category; `nox -s selftest` runs all 116 (about 21 minutes)
    "no-done", "named-events", "invalid-utf8", "json-content-type", "buffered-to-end", "object-plural",
    "id-per-chunk", "role-every-delta", "content-object", "finish-never", "finish-eos", "max-tokens-ignored",
    "stop-ignored", "usage-unrequested", "usage-before-finish", "tool-index-missing", "tool-call-in-content",
    "tool-choice-none-ignored", "think-markup-leaks", "json-fenced", "response-format-ignored", "error-500",
    "unknown-model-served", "cancel-unknown-200", "models-bare-list", "ollama-no-done", "image-crash",
]


def test_catalogue_size() -> None:
    assert len(DEFECTS) >= 70 and len(LEGAL) >= 12
    assert {f.name for f in DEFECTS}.isdisjoint({f.name for f in LEGAL})


@pytest.mark.parametrize("name", SUBSET)
def test_defect_is_caught_by_an_expected_rule(name: str) -> None:
    fault = BY_NAME[name]
    row = run_one(name, fault.expected, legal=False)
    assert row.error == "" and row.caught_by, f"{name}: not caught by {fault.expected}; failures: {row.extra}"


@pytest.mark.parametrize("name", [f.name for f in LEGAL])
def test_legal_variation_passes(name: str) -> None:
    row = run_one(name, (), legal=True)
    assert row.error == "" and row.extra == [], f"{name}: must/should failures {row.extra}"
