"""langchain-openai's ChatOpenAI.stream against the replay server, the chunks added up as LangChain's users do
(``AIMessageChunk`` addition merges tool-call chunks by index). Standalone: runs in the client's own environment."""

from __future__ import annotations

import json
import os
from typing import Any

from _replay import blank, chat_options, reading, recorded, serve


def one(i: int = 0) -> dict[str, Any]:
    """One request (the ``i``-th exchange's tools and options); what the client's user ends up with."""
    import langchain_openai
    from langchain_openai import ChatOpenAI

    version = getattr(langchain_openai, "__version__", "")
    out = blank(f"langchain-openai {version}".strip())
    model = ChatOpenAI(model="replay", base_url=os.environ["OPENAI_BASE_URL"],
                       api_key=os.environ.get("OPENAI_API_KEY", "x"), max_retries=0, timeout=30, stream_usage=True)
    options = chat_options(recorded(i))
    tools, choice = options.pop("tools", None), options.pop("tool_choice", None)
    with reading(out):
        runnable = model.bind_tools(tools, tool_choice=choice) if tools else model
        runnable = runnable.bind(**options) if options else runnable  # max_tokens, stop, ... as the request had them
        total = None
        for chunk in runnable.stream("Hi"):
            total = chunk if total is None else total + chunk
        if total is not None:
            content = total.content
            out["content"] = content if isinstance(content, str) else json.dumps(content)
            extra = total.additional_kwargs or {}
            out["reasoning"] = extra.get("reasoning_content") or extra.get("reasoning") or ""
            out["tool_calls"] = [{"id": c.get("id"), "name": c.get("name"), "arguments": c.get("args")}
                                 for c in sorted(total.tool_call_chunks or [], key=lambda c: c.get("index") or 0)]
            out["finish_reason"] = (total.response_metadata or {}).get("finish_reason")
            usage = total.usage_metadata
            if usage:
                out["usage"] = {"prompt_tokens": usage.get("input_tokens"),
                                "completion_tokens": usage.get("output_tokens"),
                                "total_tokens": usage.get("total_tokens")}
    return out


if __name__ == "__main__":
    serve(one)
