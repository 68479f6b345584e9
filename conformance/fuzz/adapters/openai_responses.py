"""The openai Python SDK's Responses API helper (``client.responses.stream``): it accumulates the events into a
final response object. ``complete`` is whether the helper returned a final response with status completed or
incomplete rather than raising."""

from __future__ import annotations

import json

from conformance.fuzz.adapters import openai_client, result


def main() -> None:
    client = openai_client()
    out = result()
    try:
        with client.responses.stream(model="replay", input="Hi") as stream:
            for _ in stream:
                pass
            final = stream.get_final_response()
        text, reasoning = [], []
        for item in final.output:
            if item.type == "message":
                text += [c.text for c in item.content if c.type == "output_text"]
            elif item.type == "function_call":
                out["tool_calls"].append({"id": item.call_id, "name": item.name, "arguments": item.arguments})
            elif item.type == "reasoning":
                reasoning += [c.text for c in item.content or []] + [s.text for s in item.summary or []]
        out["content"], out["reasoning"] = "".join(text), "".join(reasoning)
        out["finish_reason"] = final.status
        if final.usage is not None:
            out["usage"] = {"prompt_tokens": final.usage.input_tokens, "completion_tokens": final.usage.output_tokens,
                            "total_tokens": final.usage.total_tokens}
        out["complete"] = final.status in ("completed", "incomplete")
        if final.status == "failed":
            out["error"] = {"message": str(final.error)}
    except Exception as exc:  # noqa: BLE001 - what the client made of the stream is the result
        out["error"] = {"message": f"{type(exc).__name__}: {exc}"[:300]}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
