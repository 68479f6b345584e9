"""An allowance exempts every rule the allowed behaviour would fail, not one (issue 60, seed 003's LM Studio facts)."""

from __future__ import annotations

from conformance.checks import evaluate
from conformance.exchange import Exchange, analyze
from conformance.model import Intent

ANSWER = (b'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"loaded-model","choices":[{"index":0,'
          b'"delta":{"role":"assistant","content":"Hi"},"finish_reason":null}]}\n\n'
          b'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"loaded-model","choices":[{"index":0,'
          b'"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n')


def outcomes(profile: str) -> dict[str, str]:
    ex = Exchange(request={"model": "no-such-model", "messages": [{"role": "user", "content": "Hi"}], "stream": True},
                  body=ANSWER, headers=(("content-type", "text/event-stream"), ("cache-control", "no-cache")),
                  intent=Intent.UNKNOWN_MODEL, scenario="error-unknown-model")
    return {v.rule.id: str(v.outcome) for v in evaluate(analyze(ex, profile))}


def test_an_unknown_model_answered_by_a_loaded_one_is_lm_studios_documented_choice() -> None:
    """Seed 003: LM Studio answers a request for an unknown model id with a loaded model. Under --profile lmstudio
    no rule fails it (ERR-012 passes on the allowance; ERR-006 and ERR-007, the bad-input rules, do not judge a
    request the profile reads as valid); under openai the three fail."""
    lmstudio, openai = outcomes("lmstudio"), outcomes("openai")
    assert lmstudio["ERR-012"] == "passed"
    assert {lmstudio.get(r) for r in ("ERR-005", "ERR-006", "ERR-007")} <= {"not_applicable", None}
    assert not [r for r, o in lmstudio.items() if o == "failed" and r.startswith("ERR-")]
    assert {openai["ERR-012"], openai["ERR-006"], openai["ERR-007"]} == {"failed"}
