// Codex CLI (@openai/codex, the native binary its npm package installs, run through the package's bin/codex.js)
// pointed at the replay server as a custom model provider on the Responses wire (config.toml in a scratch CODEX_HOME,
// no retries), headless: `codex exec --json`. What the user ends up with is read from the events it prints: the
// agent_message and reasoning items, turn.completed's usage, turn.failed and error events. Codex exposes no finish
// reason and no tool calls of tools it does not have, so those keys are left out (not compared).
// `record` runs it against the recording server instead, for as many turns as it takes.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { ended, scratch, run } from "./_agent.mjs";
import { blank, serve, usage, version } from "./_replay.mjs";

const mode = process.argv[2] || "replay";
const CLI = fileURLToPath(new URL("./node_modules/@openai/codex/bin/codex.js", import.meta.url));
const PROMPT = mode === "record" ? "Read notes.txt and tell me what it says." : "Hi";

async function one() {
  const out = blank(`codex ${version("@openai/codex")}`);
  delete out.finish_reason;
  delete out.tool_calls;
  const where = scratch();
  const model = process.env.CONFORMANCE_AGENT_MODEL || "replay";
  writeFileSync(join(where.home, "config.toml"), [
    `model = ${JSON.stringify(model)}`, 'model_provider = "conformance"',
    "show_raw_agent_reasoning = true", "", // reasoning text as well as summaries, as the user can choose
    "[model_providers.conformance]", 'name = "conformance"',
    `base_url = ${JSON.stringify(process.env.OPENAI_BASE_URL)}`, 'wire_api = "responses"',
    'env_key = "CONFORMANCE_AGENT_KEY"', "request_max_retries = 0", "stream_max_retries = 0", ""].join("\n"));
  const env = { HOME: where.home, CODEX_HOME: where.home, CONFORMANCE_AGENT_KEY: process.env.OPENAI_API_KEY || "replay" };
  const got = run([CLI, "exec", "--json", "--skip-git-repo-check", "--sandbox", "read-only", PROMPT], where.dir, env);
  where.done();
  let ended = false;
  for (const line of got.lines) {
    const item = line.item || {};
    if (line.type === "item.completed" && item.type === "agent_message") out.content += item.text || "";
    else if (line.type === "item.completed" && item.type === "reasoning") out.reasoning += item.text || "";
    else if (line.type === "turn.completed") {
      ended = true;
      out.complete = true;
      if (line.usage) out.usage = usage(line.usage);
    } else if (line.type === "turn.failed" || line.type === "error") {
      ended = true;
      const message = (line.error && line.error.message) || line.message || "error";
      out.error = { message: `codex ${line.type}: ${String(message)}`.slice(0, 300) };
    }
  }
  if (!ended) {
    out.error = { message: `codex printed no turn's end: ${ended(got)}`.slice(0, 300) };
  }
  return out;
}

serve(one);
