// @anthropic-ai/sdk (Node) against the replay server, as its users call it (ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY
// read by the SDK itself). `stream` runs messages.stream() and reads finalMessage(), the message the SDK accumulated
// from the events; `create` iterates messages.create({stream: true}) and assembles the raw events as the SDK's
// README shows. Prints one JSON object per request: what the user ends up with.
import Anthropic from "@anthropic-ai/sdk";
import { blank, failure, pyJson, recorded, serve, usage, version } from "./_replay.mjs";

const mode = process.argv[2] || "stream";
const REQUEST = { model: "replay", max_tokens: 256, messages: [{ role: "user", content: "Hi" }] };
// what is sent of the recorded request beside the model and messages: its tools, choice and options
const OPTIONS = ["tools", "tool_choice", "max_tokens", "system", "stop_sequences", "thinking"];

function request(i) {
  const asked = recorded(i);
  const out = { ...REQUEST };
  for (const key of OPTIONS) if (asked[key] !== undefined && asked[key] !== null) out[key] = asked[key];
  return out;
}

function read(out, blocks) {
  for (const block of blocks) {
    if (block.type === "text") out.content += block.text || "";
    else if (block.type === "thinking") out.reasoning += block.thinking || "";
    else if (block.type === "tool_use") {
      out.tool_calls.push({ id: block.id ?? null, name: block.name ?? "", arguments: pyJson(block.input) });
    }
  }
}

async function one(i) {
  const out = blank(`@anthropic-ai/sdk ${version("@anthropic-ai/sdk")} (${mode})`);
  const client = new Anthropic({ maxRetries: 0, timeout: 30000 });
  try {
    if (mode === "create") {
      const blocks = new Map();
      let u = null;
      const stream = await client.messages.create({ ...request(i), stream: true });
      for await (const event of stream) {
        if (event.type === "message_start") u = { ...event.message.usage };
        else if (event.type === "content_block_start") blocks.set(event.index, { ...event.content_block, json: "" });
        else if (event.type === "content_block_delta") {
          const block = blocks.get(event.index), delta = event.delta;
          if (delta.type === "text_delta") block.text = (block.text || "") + delta.text;
          else if (delta.type === "thinking_delta") block.thinking = (block.thinking || "") + delta.thinking;
          else if (delta.type === "input_json_delta") block.json += delta.partial_json;
        } else if (event.type === "message_delta") {
          out.finish_reason = event.delta.stop_reason ?? null;
          if (event.usage) u = { ...(u || {}), output_tokens: event.usage.output_tokens };
        }
      }
      const ordered = [...blocks.keys()].sort((a, b) => a - b).map((k) => blocks.get(k));
      for (const block of ordered) if (block.type === "tool_use") block.input = block.json ? JSON.parse(block.json) : {};
      read(out, ordered);
      out.usage = usage(u);
    } else {
      const stream = client.messages.stream(request(i));
      for await (const _event of stream) { /* the SDK accumulates the message from the events */ }
      const final = await stream.finalMessage();
      read(out, final.content || []);
      out.finish_reason = final.stop_reason ?? null;
      out.usage = usage(final.usage);
    }
    out.complete = true; // the stream ended without throwing: all the SDK tells its user
  } catch (err) {
    out.error = failure(err);
  }
  return out;
}

serve(one);
