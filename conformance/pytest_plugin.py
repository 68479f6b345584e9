"""The pytest plugin: options in one group, ``--conformance-*``, each also read from the environment."""

from __future__ import annotations

import os

import pytest

OPTIONS = (
    ("base-url", "OPENAI_BASE_URL", "Base URL of the server under test (with or without /v1)."),
    ("api-key", "OPENAI_API_KEY", "Bearer token for the server under test."),
    ("model", "CONFORMANCE_MODEL", "Model id to request (default: the first listed)."),
    ("profile", "CONFORMANCE_PROFILE", "Dialect: openai, azure, afm, lmstudio, llamacpp, vllm, ollama."),
)


def pytest_addoption(parser: pytest.Parser) -> None:
    """Register the --conformance-* options."""
    group = parser.getgroup("conformance", "chat-conformance")
    for name, env, help_text in OPTIONS:
        group.addoption(f"--conformance-{name}", dest=f"conformance_{name.replace('-', '_')}",
                        default=os.environ.get(env), help=f"{help_text} [env {env}]")
