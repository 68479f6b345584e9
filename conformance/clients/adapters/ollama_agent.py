"""An Ollama-native tool loop, as the ollama Python library's README shows it (``chat(..., tools=[...],
stream=True)``, the calls run and their results sent back as ``tool`` messages): the driver that records what such
a client sends on /api/chat (``conformance agents record ollama-python``). Standalone: runs in the client's own
environment."""

from __future__ import annotations

import json
import os
from typing import Any


def get_weather(city: str) -> str:
    """Current weather for a city.

    Args:
      city: the city
    """
    return "18 C and sunny"


def main() -> None:
    import ollama

    client = ollama.Client(host=os.environ["OLLAMA_HOST"])
    model = os.environ.get("CONFORMANCE_AGENT_MODEL", "replay")
    messages: list[Any] = [{"role": "user", "content": "What is the weather in Paris?"}]
    text = ""
    for _ in range(4):
        calls: list[Any] = []
        content = ""
        for part in client.chat(model=model, messages=messages, tools=[get_weather], stream=True):
            content += part.message.content or ""
            calls += part.message.tool_calls or []
        messages.append({"role": "assistant", "content": content,
                         "tool_calls": [{"function": {"name": c.function.name, "arguments": dict(c.function.arguments)}}
                                        for c in calls]})
        if not calls:
            text = content
            break
        for call in calls:
            messages.append({"role": "tool", "content": get_weather(**call.function.arguments),
                             "tool_name": call.function.name})
    from importlib.metadata import version

    print(json.dumps({"client": f"ollama {version('ollama')}", "content": text}))


if __name__ == "__main__":
    main()
