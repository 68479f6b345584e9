"""What a correct client makes of a server's deviation (issues 23 and 60): llama-cpp-python sends the tool name in
every chunk of a call, the bytes concatenate it, and the call the server meant is the offered name once; a Responses
stream's terminal object that contradicts its deltas, read by a client that returns it, is recovered."""

from __future__ import annotations

from conformance.fuzz.client_fuzz import compare, meant_names

WEATHER = {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}
REQUEST = {"model": "m", "messages": [], "tools": [WEATHER, {"type": "function", "function": {"name": "a"}}]}


def calls(*names: str, arguments: str = '{"city": "Paris"}') -> dict[str, object]:
    return {"tool_calls": [{"id": f"call_{i}", "name": n, "arguments": arguments} for i, n in enumerate(names)]}


def test_a_name_repeated_in_every_chunk_is_the_offered_name_once() -> None:
    """Issue 60: llama-cpp-python's name in every piece; the bytes join it to 40 copies. The call the server meant is
    the offered tool's, once: a client that hands its user the 440-character name (langchain-openai) has lost it."""
    want = meant_names(calls("get_weather" * 40), REQUEST)
    assert want == calls("get_weather")
    assert compare(want, calls("get_weather")) == []
    [problem] = compare(want, calls("get_weather" * 40))
    assert problem.startswith("tool_calls:")
    assert meant_names(calls("a" * 3, "get_weather"), REQUEST) == calls("a", "get_weather")


def test_any_other_name_is_left_as_the_bytes_say() -> None:
    assert meant_names(calls("get_weatherget_weat"), REQUEST) == calls("get_weatherget_weat")  # no whole repetition
    assert meant_names(calls("get_time" * 2), REQUEST) == calls("get_time" * 2)  # not offered
    assert meant_names(calls("get_weather" * 2), {"model": "m"}) == calls("get_weather" * 2)  # nothing offered
    assert meant_names({"tool_calls": []}, REQUEST) == {"tool_calls": []}


def responses_call(deltas: list[str], final: str) -> object:
    """A Responses stream of one function call: its argument deltas, then .done events and a completed response
    that say ``final``."""
    import json
    from pathlib import Path

    from conformance.exchange import Exchange
    from conformance.fixtures import Fixture

    item = {"id": "fc_1", "type": "function_call", "status": "in_progress", "call_id": "call_1", "name": "f",
            "arguments": ""}
    done = {**item, "status": "completed", "arguments": final}
    response = {"id": "resp_1", "object": "response", "status": "in_progress", "output": []}
    events = [("response.created", {"response": response}),
              ("response.output_item.added", {"output_index": 0, "item": item}),
              *[("response.function_call_arguments.delta", {"output_index": 0, "item_id": "fc_1", "delta": d})
                for d in deltas],
              ("response.function_call_arguments.done", {"output_index": 0, "item_id": "fc_1", "arguments": final}),
              ("response.output_item.done", {"output_index": 0, "item": done}),
              ("response.completed", {"response": {**response, "status": "completed", "output": [done]}})]
    body = "".join(f"event: {kind}\ndata: {json.dumps({'type': kind, 'sequence_number': n, **value})}\n\n"
                   for n, (kind, value) in enumerate(events)).encode()
    ex = Exchange(request={"model": "m", "input": "Hi", "stream": True}, path="/v1/responses", status=200, body=body,
                  headers=(("content-type", "text/event-stream"),))
    return Fixture("call", Path("call.sse"), {}, ex, "openai")


def test_a_client_that_returns_the_terminal_response_recovers_what_its_deltas_lost() -> None:
    from conformance.clients import _recovered_terminal
    from conformance.fuzz.client_fuzz import compare, expected

    fx = responses_call([], '{"city": "Paris"}')  # transformers serve: no argument deltas, the arguments in .done
    got = {**expected(fx), "tool_calls": [{"id": "call_1", "name": "f", "arguments": '{"city": "Paris"}'}]}
    found = compare(expected(fx), got)
    assert [p.split(":")[0] for p in found] == ["tool_calls"]
    assert [p.split(":")[0] for p in _recovered_terminal(fx, got, found)] == ["recovered"]
    wrong = {**got, "tool_calls": [{"id": "call_1", "name": "f", "arguments": "{}"}]}
    assert _recovered_terminal(fx, wrong, compare(expected(fx), wrong)) == compare(expected(fx), wrong)
    whole = responses_call(['{"city": ', '"Paris"}'], '{"city": "Paris"}')  # nothing to recover from
    assert _recovered_terminal(whole, got, []) == []
