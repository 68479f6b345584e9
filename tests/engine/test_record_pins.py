"""A recorded fixture pins its own protocol's answer (issue 61): the recorder asks the protocol which fields of the
assembly to pin, so a Completions fixture pins its choices and a Messages fixture its stop reason, not chat's keys."""

from __future__ import annotations

from conformance.engine.record import sidecar
from conformance.exchange import Exchange

SSE = (("content-type", "text/event-stream"),)
COMPLETION = (b'data: {"id":"cmpl-1","object":"text_completion","created":1,"model":"m","choices":[{"text":"Hi",'
              b'"index":0,"logprobs":null,"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n')
MESSAGE = (b'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1","type":"message","role":'
           b'"assistant","content":[],"model":"m","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":1,'
           b'"output_tokens":0}}}\n\nevent: content_block_start\ndata: {"type":"content_block_start","index":0,'
           b'"content_block":{"type":"text","text":""}}\n\nevent: content_block_delta\ndata: {"type":'
           b'"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}\n\nevent: content_block_stop\n'
           b'data: {"type":"content_block_stop","index":0}\n\nevent: message_delta\ndata: {"type":"message_delta",'
           b'"delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":1}}\n\n'
           b'event: message_stop\ndata: {"type":"message_stop"}\n\n')


def pinned(path: str, body: bytes, request: dict[str, object]) -> dict[str, object]:
    ex = Exchange(request=request, body=body, headers=SSE, path=path)
    return sidecar(ex, "test", "openai")["expected"]["assembled"]


def test_each_protocol_pins_its_own_answer() -> None:
    completion = pinned("/v1/completions", COMPLETION, {"model": "m", "prompt": "x", "stream": True})
    assert set(completion) == {"choices"} and completion["choices"][0]["text"] == "Hi"
    message = pinned("/v1/messages", MESSAGE, {"model": "m", "max_tokens": 8, "messages": [], "stream": True})
    assert set(message) == {"stop_reason", "stop_sequence", "text", "content"}
    assert message["stop_reason"] == "end_turn" and message["text"] == "Hi"
