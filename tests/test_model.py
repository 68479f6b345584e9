"""The shared vocabulary: ordered levels and outcomes that compare equal to their names."""

from __future__ import annotations

import json

import pytest

from conformance.model import Intent, Level, Outcome, gating_levels
from conformance.model.observations import Disconnect, Followup, Observations


def test_levels_are_ordered_and_equal_their_names() -> None:
    assert Level.ADVISORY < Level.SHOULD < Level.MUST and max(Level) is Level.MUST
    assert Level("must") is Level.MUST and Level.MUST == "must" and json.dumps([Level.SHOULD]) == '["should"]'
    assert sorted(Outcome) == [Outcome.PASSED, Outcome.SKIPPED, Outcome.FAILED, Outcome.ERROR]
    assert gating_levels(False) == (Level.MUST,) and gating_levels(True) == (Level.MUST, Level.SHOULD)


def test_levels_do_not_order_against_outcomes() -> None:
    with pytest.raises(TypeError):
        assert Level.MUST < Outcome.ERROR


def test_intent_values_are_the_wire_names() -> None:
    assert Intent("expect-length") is Intent.EXPECT_LENGTH and Intent.FUZZ_VALID == "fuzz-valid"


def test_observations_round_trip_and_keep_absent_apart_from_no_answer() -> None:
    obs = Observations(aborted="idle timeout", followup=Followup(None),
                       disconnect=Disconnect(running_after=0, other_stream_done=True))
    doc = obs.to_json()
    assert doc == {"aborted": "idle timeout", "followup_status": None,
                   "disconnect": {"running_after": 0, "other_stream_done": True}}
    assert Observations.from_json(doc) == obs and Observations.from_json({}).followup is None


def test_unknown_observation_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown observation 'folowup_status'"):
        Observations.from_json({"folowup_status": 200})
