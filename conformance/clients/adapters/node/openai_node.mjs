// The openai Node SDK (openai-node) against the replay server, as its users call it. `stream` iterates
// chat.completions.create({stream: true}) and assembles the deltas as the SDK's README shows; `responses` runs
// responses.stream() and reads stream.finalResponse(), the Response the SDK built from the events. Prints one JSON
// object per request: what the user ends up with.
import OpenAI from "openai";
import { blank, chatOptions, failure, recorded, serve, version } from "./_replay.mjs";

const mode = process.argv[2] || "stream";

function client() {
  return new OpenAI({ baseURL: process.env.OPENAI_BASE_URL, apiKey: process.env.OPENAI_API_KEY || "x",
                      maxRetries: 0, timeout: 30000 });
}

async function chat(i) {
  const out = blank(`openai-node ${version("openai")} (${mode})`);
  const calls = new Map();
  try {
    const stream = await client().chat.completions.create({
      model: "replay", messages: [{ role: "user", content: "Hi" }], stream: true,
      stream_options: { include_usage: true }, ...chatOptions(recorded(i)) });
    for await (const chunk of stream) {
      if (chunk.usage) out.usage = chunk.usage;
      const choice = (chunk.choices || []).find((c) => c.index === 0); // the first choice's
      if (!choice) continue;
      const delta = choice.delta || {};
      out.content += delta.content || "";
      out.reasoning += delta.reasoning_content || delta.reasoning || "";
      for (const piece of delta.tool_calls || []) {
        if (!calls.has(piece.index)) calls.set(piece.index, { id: null, name: "", arguments: "" });
        const call = calls.get(piece.index);
        call.id = call.id || piece.id || null;
        if (piece.function) {
          call.name += piece.function.name || "";
          call.arguments += piece.function.arguments || "";
        }
      }
      if (choice.finish_reason != null) out.finish_reason = choice.finish_reason;
    }
    out.tool_calls = [...calls.keys()].sort((a, b) => a - b).map((k) => calls.get(k));
    out.complete = true; // the iterator ended without throwing: all the SDK tells its user
  } catch (err) {
    out.error = failure(err);
  }
  return out;
}

async function responses() {
  const out = blank(`openai-node ${version("openai")} (${mode})`);
  try {
    const stream = client().responses.stream({ model: "replay", input: "Hi" });
    for await (const _event of stream) { /* the SDK builds the response from the events */ }
    const final = await stream.finalResponse();
    for (const item of final.output || []) {
      if (item.type === "message") {
        for (const part of item.content || []) if (part.type === "output_text") out.content += part.text || "";
      } else if (item.type === "reasoning") {
        for (const part of item.content || []) out.reasoning += part.text || "";
        for (const part of item.summary || []) out.reasoning += part.text || "";
      } else if (item.type === "function_call") {
        out.tool_calls.push({ id: item.call_id ?? null, name: item.name ?? "", arguments: item.arguments ?? "" });
      }
    }
    out.finish_reason = final.status ?? null;
    if (final.usage) {
      out.usage = { prompt_tokens: final.usage.input_tokens, completion_tokens: final.usage.output_tokens,
                    total_tokens: final.usage.total_tokens };
    }
    if (final.error) out.error = { message: String(final.error.message || final.error.code || "error") };
    out.complete = !final.error && (final.status === "completed" || final.status === "incomplete");
  } catch (err) {
    out.error = failure(err);
  }
  return out;
}

await serve((i) => (mode === "responses" ? responses() : chat(i)));
