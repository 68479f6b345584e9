// What every Node adapter shares (node's standard library only): the blank result, the installed version of a
// package, and the loop over CONFORMANCE_REPLAY_COUNT requests, each printed as one JSON line as it ends.
import { readFileSync } from "node:fs";

// the installed version of a package beside this script (its exports may not expose package.json to resolution)
export function version(dist) {
  try {
    return JSON.parse(readFileSync(new URL(`./node_modules/${dist}/package.json`, import.meta.url), "utf8")).version;
  } catch {
    return "";
  }
}

// the request the scenario sent for the i-th exchange replayed (CONFORMANCE_REPLAY_REQUESTS, a JSON file of one
// request body per exchange): the adapter sends its tools, tool choice and options, so the client's own checks run
export function recorded(i) {
  const path = process.env.CONFORMANCE_REPLAY_REQUESTS;
  if (!path) return {};
  try {
    const all = JSON.parse(readFileSync(path, "utf8"));
    const one = Array.isArray(all) ? all[i] : null;
    return one && typeof one === "object" ? one : {};
  } catch {
    return {};
  }
}

const CHAT_OPTIONS = ["tools", "tool_choice", "parallel_tool_calls", "max_tokens", "max_completion_tokens", "stop",
                      "response_format"];

// the recorded chat request's tools, tool choice and options
// (function tools only: a client may refuse another kind before it sends anything, and the replay answers the
// exchanges in turn, one request each; no tool choice without them)
export function chatOptions(request) {
  const out = {};
  for (const key of CHAT_OPTIONS) if (request[key] !== undefined && request[key] !== null) out[key] = request[key];
  const tools = (out.tools || []).filter((t) => t && t.type === "function");
  if (tools.length) out.tools = tools;
  else { delete out.tools; delete out.tool_choice; delete out.parallel_tool_calls; }
  return out;
}

export function blank(client) {
  return { content: "", reasoning: "", tool_calls: [], finish_reason: null, usage: null, error: null,
           complete: false, client };
}

export function failure(err) {
  const name = err && err.constructor ? err.constructor.name : "Error";
  return { message: `${name}: ${err && err.message !== undefined ? err.message : String(err)}`.slice(0, 300) };
}

export async function serve(one) {
  const count = Number.parseInt(process.env.CONFORMANCE_REPLAY_COUNT || "1", 10);
  for (let i = 0; i < count; i++) {
    const out = await one(i);
    process.stdout.write(JSON.stringify(out) + "\n");
  }
}

// a value as Python's json.dumps writes it (", " and ": ", non-ASCII escaped): the form of the judge's expected view
export function pyJson(value) {
  if (value === null || typeof value !== "object") {
    return JSON.stringify(value).replace(/[\u007f-\uffff]/g, (c) => "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0"));
  }
  if (Array.isArray(value)) return "[" + value.map(pyJson).join(", ") + "]";
  return "{" + Object.entries(value).map(([k, v]) => pyJson(k) + ": " + pyJson(v)).join(", ") + "}";
}

// usage as {input_tokens, output_tokens} (Anthropic's, Responses', Codex's) in chat's names, as the adapters print it
export function usage(u) {
  if (!u) return null;
  const prompt = u.input_tokens ?? null, completion = u.output_tokens ?? null;
  const total = Number.isInteger(prompt) && Number.isInteger(completion) ? prompt + completion : null;
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: total };
}
