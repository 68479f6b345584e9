"""Test settings: the derandomized Hypothesis profile unless told otherwise."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

import conformance.fuzz.strategies  # noqa: F401  (registers the profiles)

settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(scope="session")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled bigram model, built into a fresh folder (needs the reference extra)."""
    pytest.importorskip("tokenizers", reason="the bundled model needs the reference extra")
    from reference_server import model as bundled

    return bundled.build(tmp_path_factory.mktemp("bigram"))
