// The Vercel AI SDK (ai's streamText with @ai-sdk/openai-compatible) against the replay server, its fullStream read
// as its users do: text and reasoning deltas, tool-input deltas by call id, the finish part's raw finish reason and
// total usage, error parts. Prints one JSON object per request: what the user ends up with.
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { jsonSchema, streamText, tool } from "ai";
import { blank, failure, recorded, serve, version } from "./_replay.mjs";

// the recorded request's tools and tool choice as the SDK takes them (its own checks run on them: a tool call in a
// stream asked for with tool_choice none is its ToolChoiceViolationError), and its output cap
function options(request) {
  const out = {};
  const tools = {};
  for (const t of request.tools || []) {
    const fn = t && t.type === "function" ? t.function : null;
    if (fn && typeof fn.name === "string") {
      tools[fn.name] = tool({ description: fn.description, inputSchema: jsonSchema(fn.parameters || { type: "object" }) });
    }
  }
  if (Object.keys(tools).length) out.tools = tools;
  const choice = request.tool_choice;
  if (choice === "none" || choice === "auto" || choice === "required") out.toolChoice = choice;
  else if (choice && choice.type === "function" && choice.function) out.toolChoice = { type: "tool", toolName: choice.function.name };
  const cap = request.max_completion_tokens ?? request.max_tokens;
  if (Number.isInteger(cap)) out.maxOutputTokens = cap;
  return out;
}

async function one(i) {
  const out = blank(`ai ${version("ai")} + @ai-sdk/openai-compatible ${version("@ai-sdk/openai-compatible")}`);
  const provider = createOpenAICompatible({ name: "replay", baseURL: process.env.OPENAI_BASE_URL,
                                            apiKey: process.env.OPENAI_API_KEY || "x", includeUsage: true });
  const calls = new Map(); // by call id, in the order they started
  let finished = false;
  try {
    const result = streamText({ model: provider.chatModel("replay"), prompt: "Hi", maxRetries: 0,
                                abortSignal: AbortSignal.timeout(30000), onError: () => {}, ...options(recorded(i)) });
    for await (const part of result.fullStream) {
      switch (part.type) {
        case "text-delta": out.content += part.text ?? part.delta ?? ""; break;
        case "reasoning-delta": out.reasoning += part.text ?? part.delta ?? ""; break;
        case "tool-input-start":
          if (!calls.has(part.id)) calls.set(part.id, { id: part.id, name: part.toolName ?? "", arguments: "" });
          break;
        case "tool-input-delta":
          if (calls.has(part.id)) calls.get(part.id).arguments += part.delta ?? "";
          break;
        case "tool-call":
          if (!calls.has(part.toolCallId)) {
            const input = typeof part.input === "string" ? part.input : JSON.stringify(part.input);
            calls.set(part.toolCallId, { id: part.toolCallId, name: part.toolName ?? "", arguments: input });
          }
          break;
        case "error": if (!out.error) out.error = failure(part.error); break;
        case "finish":
          finished = true;
          out.finish_reason = part.rawFinishReason ?? part.finishReason ?? null;
          if (part.totalUsage && part.totalUsage.inputTokens !== undefined) {
            out.usage = { prompt_tokens: part.totalUsage.inputTokens, completion_tokens: part.totalUsage.outputTokens,
                          total_tokens: part.totalUsage.totalTokens };
          }
          break;
        default: break;
      }
    }
    out.tool_calls = [...calls.values()];
    out.complete = finished && !out.error;
  } catch (err) {
    out.error = failure(err);
  }
  return out;
}

await serve(one);
