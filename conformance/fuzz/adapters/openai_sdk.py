"""The openai Python SDK, with its streaming helper that accumulates tool calls. ``complete`` is
whether the helper returned a final completion rather than raising: the SDK tells its user nothing else."""

from __future__ import annotations

import json

from conformance.fuzz.adapters import openai_client, result


def main() -> None:
    client = openai_client()
    out = result()
    try:
        with client.chat.completions.stream(model="replay", messages=[{"role": "user", "content": "Hi"}],
                                            stream_options={"include_usage": True}) as stream:
            for _ in stream:
                pass
            final = stream.get_final_completion()
        choice = final.choices[0] if final.choices else None
        if choice is not None:
            message = choice.message
            out["content"] = message.content or ""
            extra = message.model_extra or {}
            out["reasoning"] = extra.get("reasoning_content") or extra.get("reasoning") or ""
            out["tool_calls"] = [{"id": c.id, "name": c.function.name, "arguments": c.function.arguments}
                                 for c in message.tool_calls or []]
            out["finish_reason"] = choice.finish_reason
        out["usage"] = final.usage.model_dump() if final.usage else None
        out["complete"] = True  # the helper returned a final completion: that is all it tells its user
    except Exception as exc:  # noqa: BLE001 - what the client made of the stream is the result
        out["error"] = {"message": f"{type(exc).__name__}: {exc}"[:300]}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
