"""Seed 003 §6: a model list mixes chat models with embedding, reranking, speech and image ones, and only the name
tells them apart; discovery picks a chat model by that heuristic."""

from __future__ import annotations

import pytest

from conformance.engine.runner import chat_model


@pytest.mark.parametrize("ids, chosen", [
    (["text-embedding-3-small", "bge-reranker-v2", "whisper-1", "tts-1", "flux-schnell", "qwen3-4b"], "qwen3-4b"),
    (["nomic-embed-text", "llama3.2:1b"], "llama3.2:1b"),
    (["gpt-image-1", "CLIP-vit", "mistral-7b", "phi-4"], "mistral-7b"),
    (["only-embedding-model"], "only-embedding-model"),  # nothing else listed: the first, and the run says which
])
def test_discovery_passes_over_models_that_are_not_chat(ids: list[str], chosen: str) -> None:
    assert chat_model(ids) == chosen
