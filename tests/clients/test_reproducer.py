"""A reproducer is written whatever the server sent (issue 60: an emoji sent as two escaped surrogate halves, one per
chunk, made `conformance clients` end in a UnicodeEncodeError while writing it)."""

from __future__ import annotations

import json
from pathlib import Path

from conformance.clients import _fixture
from conformance.exchange import Exchange

HALVES = ('data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,'
          '"delta":{"role":"assistant","content":"\\ud83d"},"finish_reason":null}]}\n\n'
          'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,'
          '"delta":{"content":"\\ude00"},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n')


def test_a_reproducer_of_surrogate_halves_is_written_and_reads_back(tmp_path: Path) -> None:
    ex = Exchange(request={"model": "m", "messages": [{"role": "user", "content": "Hi"}], "stream": True},
                  body=HALVES.encode(), headers=(("content-type", "text/event-stream"),), scenario="stream-plain")
    fixture = _fixture(ex, "001-stream-plain", tmp_path, "openai", write=True)
    sidecar = (tmp_path / "001-stream-plain.json").read_text(encoding="utf-8")  # valid UTF-8
    assert json.loads(sidecar)["expected"]["assembled"]["content"] == "\U0001f600"  # the halves, escaped: read back whole
    assert fixture.exchange.body == HALVES.encode()
