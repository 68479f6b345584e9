"""Test settings: the derandomized Hypothesis profile unless told otherwise."""

from __future__ import annotations

import os

from hypothesis import settings

import conformance.fuzz.strategies  # noqa: F401  (registers the profiles)

settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
