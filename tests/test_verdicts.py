"""Legal choices are never failures (issue 27): each documented choice of a server passes, and the defect next to it
still fails, judged offline on the bytes."""

from __future__ import annotations

import json

import pytest

from conformance.checks import evaluate
from conformance.exchange import Exchange, analyze
from conformance.model import Intent


def verdict(rule: str, ex: Exchange, profile: str = "openai") -> str:
    [v] = evaluate(analyze(ex, profile), frozenset({rule}))
    return str(v.outcome)


def effort(status: int, body: object) -> Exchange:
    return Exchange(request={"model": "m", "messages": [], "reasoning_effort": "xhigh"}, status=status,
                    body=json.dumps(body).encode(), headers=(("content-type", "application/json"),),
                    intent=Intent.EFFORT)


@pytest.mark.parametrize(("status", "body", "openai", "strict"), [
    (422, {"error": {"message": "reasoning_effort must be one of low, medium, high", "type": "invalid_request_error"}},
     "passed", "failed"),  # seed 003 §2.5: a stricter server may reject with 400 or 422
    (400, {"error": "unsupported reasoning_effort"}, "passed", "failed"),  # LM Studio's string error
    (400, {"error": {"message": "no", "code": "unsupported_value", "param": "reasoning_effort"}}, "passed", "passed"),
    (500, {"error": {"message": "boom"}}, "failed", "failed"),
    (404, {"detail": "not an error envelope"}, "failed", "failed"),
], ids=["422-envelope", "400-string", "400-unsupported-value", "500", "404-no-envelope"])
def test_a_reasoning_effort_refusal(status: int, body: object, openai: str, strict: str) -> None:
    assert verdict("RSN-010", effort(status, body)) == openai
    assert verdict("RSN-010", effort(status, body), "strict") == strict


def ollama(status: int, lines: list[dict[str, object]]) -> Exchange:
    return Exchange(request={"model": "conformance-no-such-model", "messages": []}, status=status,
                    body=b"".join(json.dumps(x).encode() + b"\n" for x in lines), path="/api/chat",
                    headers=(("content-type", "application/x-ndjson" if status < 400 else "application/json"),),
                    intent=Intent.OLLAMA_FAILURE)


def test_an_unknown_ollama_model_answered_is_should_not_must() -> None:
    """Seed 002 names failure shapes, not the unknown model: answering it is OLL-015 (should, Ollama's own 404)."""
    served = ollama(200, [{"model": "x", "message": {"role": "assistant", "content": "Hi"}, "done": False},
                          {"model": "x", "message": {"role": "assistant", "content": ""}, "done": True}])
    assert verdict("OLL-014", served) in ("passed", "not_applicable") and verdict("OLL-015", served) == "failed"
    refused = Exchange(request={"model": "m", "messages": []}, status=404, body=b'{"error": "model not found"}',
                       path="/api/chat", headers=(("content-type", "application/json"),), intent=Intent.OLLAMA_FAILURE)
    assert verdict("OLL-014", refused) == "passed" and verdict("OLL-015", refused) == "passed"
    broken = ollama(200, [{"error": "model not found"}, {"model": "x", "done": True}])
    assert verdict("OLL-014", broken) == "failed" and verdict("OLL-015", broken) == "passed"


def test_seed_003s_model_list_fails_no_must_or_should_rule() -> None:
    """Seed 003 §6 documents the list servers send as {"data": [{"id": ..., "name": ...}]}: MOD-004 and MOD-006
    say what OpenAI's list has besides (advisory), nothing gates on it."""
    from conformance.rules import RULES

    ex = Exchange(method="GET", path="/v1/models", status=200, body=b'{"data":[{"id":"qwen3-8b","name":"qwen3-8b"}]}',
                  headers=(("content-type", "application/json"),))
    found = {str(v.rule.id): (str(v.outcome), v.rule.level) for v in evaluate(analyze(ex, "openai"), None)
             if str(v.outcome) == "failed"}
    assert set(found) == {"MOD-004", "MOD-006"} and {lvl for _, lvl in found.values()} == {"advisory"}
    assert {r.id for r in RULES if r.category == "models" and r.level in ("must", "should")} >= {"MOD-001", "MOD-002"}


def test_a_valid_16_mib_request_may_be_answered() -> None:
    """Seed 003 §2.3: a request with several photos is tens of megabytes. Answered 200, it fails no must or should
    rule; seed 001's body limit (413) is ERR-015 under --profile strict."""
    from conformance.rules import RULES_BY_ID

    stream = (b'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,'
              b'"delta":{"role":"assistant","content":"Hi"},"finish_reason":null}]}\n\n'
              b'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,'
              b'"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n')
    ex = Exchange(request={"model": "m", "messages": [{"role": "user", "content": "x"}], "stream": True}, body=stream,
                  headers=(("content-type", "text/event-stream"), ("cache-control", "no-cache")),
                  intent=Intent.OVERSIZED)
    failed = [v.rule.id for v in evaluate(analyze(ex, "openai")) if str(v.outcome) == "failed"
              and RULES_BY_ID[v.rule.id].level in ("must", "should")]
    assert failed == []
    assert verdict("ERR-015", ex, "strict") == "failed"
    refused = Exchange(request={"model": "m", "messages": []}, status=413, body=b'{"error":{"message":"too large"}}',
                       headers=(("content-type", "application/json"),), intent=Intent.OVERSIZED)
    assert verdict("ERR-015", refused, "strict") == "passed"


def test_an_unknown_field_accepted_is_legal_and_seed_001_refuses_it() -> None:
    ex = Exchange(request={"model": "m", "messages": [], "temperatur": 0.5}, status=200, body=b'{"choices":[]}',
                  headers=(("content-type", "application/json"),), intent=Intent.UNKNOWN_PARAMETER)
    [v] = evaluate(analyze(ex, "openai"), frozenset({"ERR-013"}))
    assert str(v.outcome) == "not_applicable"  # DEVIATIONS I1, I2: accepting it is legal
    assert verdict("ERR-013", ex, "strict") == "failed"  # seed 001: 400 unknown_parameter naming it


def test_a_200_with_no_body_passes_nothing() -> None:
    """mlx-omni-server's json-schema-strict, both runs: 200 text/event-stream and 0 bytes. Nothing was shown, so
    TRN-018 fails; a body that is there passes it."""
    empty = Exchange(request={"model": "m", "messages": [], "stream": True}, body=b"",
                     headers=(("content-type", "text/event-stream"),))
    assert verdict("TRN-018", empty) == "failed"
    whole = Exchange(request={"model": "m", "messages": [], "stream": True}, headers=(("content-type", "text/event-stream"),),
                     body=b'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[]}\n\n'
                          b"data: [DONE]\n\n")
    assert verdict("TRN-018", whole) == "passed"


def test_a_feature_is_supported_only_when_an_answer_shows_it() -> None:
    from conformance.engine.judge import _not_shown
    from conformance.scenarios import BY_NAME
    from conformance.settings import Settings

    settings = Settings()
    empty = Exchange(request={"model": "m", "messages": [], "stream": True}, body=b"",
                     headers=(("content-type", "text/event-stream"),))
    assert _not_shown(BY_NAME["json-schema-strict"], empty, settings) == "with an empty body"
    prose = Exchange(request={"model": "m", "messages": [], "tool_choice": "required"}, body=json.dumps({
        "id": "c", "object": "chat.completion", "created": 1, "model": "m", "choices": [{"index": 0, "message": {
            "role": "assistant", "content": "Hello"}, "finish_reason": "stop"}]}).encode(),
        headers=(("content-type", "application/json"),))
    assert _not_shown(BY_NAME["tools-required"], prose, settings) == "no tool call in the answer"
    assert _not_shown(BY_NAME["json-object"], prose, settings) == "the content is not JSON"
    data = Exchange(request=prose.request, body=prose.body.replace(b'"Hello"', b'"{\\"a\\": 1}"'),
                    headers=prose.headers)
    assert _not_shown(BY_NAME["json-object"], data, settings) == ""


def test_an_ignored_cap_is_fin_006_not_a_missing_length_finish() -> None:
    """llama-cpp-python: max_completion_tokens 5, 13 tokens, finish stop at the end of the text: the cap was
    ignored (FIN-006), not reached, so FIN-007 (a cut says length) has nothing to say."""
    body = json.dumps({"id": "c", "object": "chat.completion", "created": 1, "model": "m", "choices": [
        {"index": 0, "message": {"role": "assistant", "content": "Hello from the reference server, at length."},
         "finish_reason": "stop"}], "usage": {"prompt_tokens": 5, "completion_tokens": 13, "total_tokens": 18}}).encode()
    ex = Exchange(request={"model": "m", "messages": [], "max_completion_tokens": 5}, body=body,
                  headers=(("content-type", "application/json"),), intent=Intent.EXPECT_LENGTH)
    assert verdict("FIN-007", ex) == "passed" and verdict("FIN-006", ex) == "failed"
    cut = Exchange(request=ex.request, body=body.replace(b'"completion_tokens": 13', b'"completion_tokens": 5')
                   .replace(b'"total_tokens": 18', b'"total_tokens": 10'), headers=ex.headers, intent=Intent.EXPECT_LENGTH)
    assert verdict("FIN-007", cut) == "failed"  # reached the cap, and says stop


def timed(arrivals: tuple[tuple[float, int], ...], paced: float | None) -> Exchange:
    from conformance.model.observations import Observations

    chunk = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m"}
    events = [{**chunk, "choices": [{"index": 0, "delta": {"content": f" w{i}"}, "finish_reason": None}]}
              for i in range(12)]
    events.append({**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    body = "".join(f"data: {json.dumps(e)}\n\n" for e in events).encode() + b"data: [DONE]\n\n"
    scaled = tuple((t, min(len(body), int(len(body) * share))) for t, share in arrivals)
    return Exchange(request={"model": "m", "messages": [], "stream": True}, status=200, body=body,
                    headers=(("content-type", "text/event-stream"),), arrivals=scaled,
                    observations=Observations(paced_s=paced))


@pytest.mark.parametrize(("arrivals", "paced", "outcome"), [
    (((1.1, 1.0),), 1.3, "failed"),  # one read at the end
    (((1.1152, 0.46), (1.1155, 0.9), (1.1155, 1.0)), 1.3, "failed"),  # one write split by the socket (the self-test)
    (((0.9, 0.3), (0.95, 0.6), (1.0, 1.0)), 1.3, "failed"),  # back to back under load: 100 ms of 1.3 s
    (((0.1, 0.1), (0.5, 0.4), (0.9, 0.7), (1.3, 1.0)), 1.3, "passed"),  # written as generated
    (((1.1, 1.0),), 0.2, "not_applicable"),  # a short stream shows nothing either way
], ids=["one-read", "split-write", "back-to-back", "incremental", "short"])
def test_a_buffered_stream_is_caught_however_the_socket_split_it(
        arrivals: tuple[tuple[float, float], ...], paced: float, outcome: str) -> None:
    assert verdict("TRN-007", timed(arrivals, paced)) == outcome


def parity(arguments: list[str], unstreamed: dict[str, object] | None) -> Exchange:
    from conformance.model.observations import Observations

    chunk = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m"}
    first = {"index": 0, "id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": ""}}
    events = [{**chunk, "choices": [{"index": 0, "delta": {"role": "assistant", "tool_calls": [first]},
                                     "finish_reason": None}]}]
    events += [{**chunk, "choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {
        "arguments": piece}}]}, "finish_reason": None}]} for piece in arguments]
    events.append({**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})
    body = "".join(f"data: {json.dumps(e)}\n\n" for e in events).encode() + b"data: [DONE]\n\n"
    return Exchange(request={"model": "m", "messages": [], "stream": True, "temperature": 0, "seed": 7}, status=200,
                    body=body, headers=(("content-type", "text/event-stream"),),
                    observations=Observations(unstreamed=unstreamed))


def unstreamed(arguments: str, repeatable: bool = True) -> dict[str, object]:
    return {"content": "", "reasoning": "", "tool_calls": [{"name": "get_weather", "arguments": arguments}],
            "finish_reason": "tool_calls", "usage": None, "repeatable": repeatable}


@pytest.mark.parametrize(("pieces", "seen", "outcome"), [
    (['{"city":', '"Paris"}'], unstreamed('{"city": "Paris"}'), "passed"),  # spacing aside, the same arguments
    (['{"city":', '"Pa"}'], unstreamed('{"city": "Paris"}'), "failed"),  # the stream's parser lost text
    (['{"city":', '"Pa"}'], unstreamed('{"city": "Paris"}', repeatable=False), "not_applicable"),  # not repeatable
    (['{"city":', '"Pa"}'], None, "not_applicable"),  # no unstreamed answer (refused, or not a parity scenario)
], ids=["same", "differs", "not-repeatable", "no-baseline"])
def test_stream_parity_is_judged_only_on_a_repeatable_server(pieces: list[str], seen: dict[str, object] | None,
                                                             outcome: str) -> None:
    assert verdict("CHK-022", parity(pieces, seen)) == outcome
