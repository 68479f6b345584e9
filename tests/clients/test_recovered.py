"""A client that reads a server's deviation as the server meant it is not broken by it (issue 23): llama-cpp-python
sends the tool name in every chunk of a call; the bytes concatenate it, the Vercel AI SDK takes it once."""

from __future__ import annotations

from conformance.clients import _recovered_names


def calls(*names: str, arguments: str = '{"city": "Paris"}') -> dict[str, object]:
    return {"tool_calls": [{"id": f"call_{i}", "name": n, "arguments": arguments} for i, n in enumerate(names)]}


def test_a_name_repeated_in_every_chunk_taken_once_is_recovered() -> None:
    assert _recovered_names(calls("get_weather" * 40), calls("get_weather"))
    assert _recovered_names(calls("a" * 3, "b"), calls("a", "b"))


def test_any_other_difference_is_not() -> None:
    assert not _recovered_names(calls("get_weather"), calls("get_weather"))  # nothing differs
    assert not _recovered_names(calls("get_weatherget_weat"), calls("get_weather"))  # not a whole repetition
    assert not _recovered_names(calls("get_weather" * 2), calls("get_time"))
    assert not _recovered_names(calls("get_weather" * 2), calls("get_weather", arguments="{}"))  # arguments lost
    assert not _recovered_names(calls("get_weather" * 2), calls(""))
    assert not _recovered_names(calls("a", "b"), calls("a"))  # a call lost
    assert not _recovered_names({"tool_calls": []}, {"tool_calls": []})


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
