"""The OpenAI Agents SDK (openai-agents) on Chat Completions against the replay server: an Agent with one function
tool (get_weather) and OpenAIChatCompletionsModel over the openai client, run with Runner.run_streamed, as its
documentation shows for other providers. One turn (max_turns=1: an answer that calls the tool ends the run after the
call, so each run makes one request); what the user ends up with is read from the run's raw responses and its final
output. The SDK exposes no finish reason, so that key is left out (not compared). ``record`` runs the whole loop
against the recording server instead. Standalone: runs in the client's own environment."""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Any

from _replay import blank, serve


def one() -> dict[str, Any]:
    from agents import Agent, FunctionTool, OpenAIChatCompletionsModel, Runner, function_tool, set_tracing_disabled
    from agents.exceptions import MaxTurnsExceeded
    from openai import AsyncOpenAI

    set_tracing_disabled(True)
    record = len(sys.argv) > 1 and sys.argv[1] == "record"
    out = blank("openai-agents", "openai-agents")
    del out["finish_reason"]

    @function_tool
    def get_weather(city: str) -> str:
        """Current weather for a city."""
        return "18 C and sunny"

    client = AsyncOpenAI(base_url=os.environ["OPENAI_BASE_URL"], api_key=os.environ.get("OPENAI_API_KEY", "x"),
                         max_retries=0, timeout=30)
    model = OpenAIChatCompletionsModel(model=os.environ.get("CONFORMANCE_AGENT_MODEL", "replay"),
                                       openai_client=client)
    async def answer(_ctx: Any, _arguments: str) -> str:
        return "done"

    # the tools the suite's scenarios offer, so a recorded call of any of them is one the agent has
    others = [FunctionTool(name=name, description=name, params_json_schema={"type": "object"},
                           on_invoke_tool=answer, strict_json_schema=False)
              for name in ("get_time", "book_trip", "set_label", "set_reminder", "run_sql")]
    agent = Agent(name="weather", instructions="Answer the user; use the tool for the weather.",
                  tools=[get_weather, *([] if record else others)], model=model)

    async def go() -> Any:
        result = Runner.run_streamed(agent, "What is the weather in Paris?", max_turns=10 if record else 1)
        try:
            async for _ in result.stream_events():
                pass
        except MaxTurnsExceeded:  # the turn ended with the tool call, as asked
            pass
        return result

    try:
        result = asyncio.run(go())
        for response in result.raw_responses:
            for item in response.output:
                kind = getattr(item, "type", None)
                if kind == "message":
                    out["content"] += "".join(getattr(p, "text", "") or "" for p in item.content)
                elif kind == "reasoning":
                    out["reasoning"] += "".join(getattr(p, "text", "") or "" for p in item.summary or [])
                elif kind == "function_call":
                    out["tool_calls"].append({"id": item.call_id, "name": item.name, "arguments": item.arguments})
            usage = response.usage
            if usage is not None and usage.requests:
                out["usage"] = {"prompt_tokens": usage.input_tokens, "completion_tokens": usage.output_tokens,
                                "total_tokens": usage.total_tokens}
        out["complete"] = True
    except Exception as exc:  # noqa: BLE001 - what the agent made of the stream is the result
        out["error"] = {"message": f"{type(exc).__name__}: {exc}"[:300]}
    return out


if __name__ == "__main__":
    serve(lambda _: one())
