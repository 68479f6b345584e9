// Claude Code (@anthropic-ai/claude-code, the native binary its npm package installs, run through the package's own
// cli-wrapper.cjs) pointed at the replay server with ANTHROPIC_BASE_URL, headless: `claude -p` with
// --output-format stream-json, one turn (--max-turns 1: an answer that calls a tool ends the turn after the call, so
// each run makes one request), no retries. What the user ends up with is read from the messages and the result it
// prints: the text and thinking blocks, the tool_use blocks, and the result's is_error (an error the user sees,
// whatever came before it).
// `record` runs it against the recording server instead, for as many turns as it takes.
import { fileURLToPath } from "node:url";
import { ended, scratch, run } from "./_agent.mjs";
import { blank, pyJson, serve, version } from "./_replay.mjs";

const mode = process.argv[2] || "replay";
const CLI = fileURLToPath(new URL("./node_modules/@anthropic-ai/claude-code/cli-wrapper.cjs", import.meta.url));
const PROMPT = mode === "record" ? "Read notes.txt and tell me what it says." : "Hi";

async function one() {
  const out = blank(`claude-code ${version("@anthropic-ai/claude-code")}`);
  const where = scratch();
  const args = [CLI, "-p", PROMPT, "--output-format", "stream-json", "--verbose", "--model",
                process.env.CONFORMANCE_AGENT_MODEL || "replay"];
  args.push(...(mode === "record" ? ["--allowedTools", "Read"] : ["--max-turns", "1"]));
  const env = { HOME: where.home, ANTHROPIC_BASE_URL: process.env.ANTHROPIC_BASE_URL,
                ANTHROPIC_API_KEY: process.env.ANTHROPIC_API_KEY || "replay", CLAUDE_CODE_MAX_RETRIES: "0",
                CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1", DISABLE_AUTOUPDATER: "1", DISABLE_TELEMETRY: "1",
                DISABLE_ERROR_REPORTING: "1" };
  const got = run(args, where.dir, env);
  where.done();
  // the first answer only: a later request (a continuation after max_tokens, a tool's result) is a turn the
  // recording does not have. Claude Code exposes no finish reason of its own per answer, and its usage is its own
  // account of the whole run, so those keys are left out (not compared).
  delete out.finish_reason;
  delete out.usage;
  let result = null;
  let first = null;
  let synthetic = false; // Claude Code wrote an API error as a message of its own
  for (const line of got.lines) {
    if (line.type === "assistant" && line.message && line.message.model === "<synthetic>") {
      // Claude Code's own message for an API error ("API Error: …", "Prompt is too long · …"): before any answer,
      // what the user sees is an error, not an answer of the server's; after one, it is a later turn's (the
      // recording has no answer for a continuation), which the result reports
      if (first === null) {
        const said = (line.message.content || []).map((b) => b.text || "").join("");
        if (!out.error) out.error = { message: `claude-code: ${said}`.slice(0, 300) };
        synthetic = true;
      }
      continue;
    }
    if (line.type === "assistant" && line.message) {
      first = first ?? line.message.id;
      if (line.message.id !== first) continue;
      for (const block of line.message.content || []) {
        if (block.type === "text") out.content += block.text || "";
        else if (block.type === "thinking") out.reasoning += block.thinking || "";
        else if (block.type === "tool_use") {
          out.tool_calls.push({ id: block.id ?? null, name: block.name ?? "", arguments: pyJson(block.input ?? {}) });
        }
      }
    } else if (line.type === "result" && result === null) result = line;
  }
  // an error of a later turn that the recording cannot answer (the replay's 503 to a continuation) is the replay's
  const replayEnded = String(result?.result ?? "").includes("the recording has no answer");
  if (first !== null && !(result && result.is_error && result.subtype !== "error_max_turns" && !replayEnded)) {
    out.complete = true; // the first answer reached the user whole; what followed is not in the recording
  } else if (result) {
    // the run's own error report counts (is_error: the user sees "API Error: ..."), even after an answer arrived;
    // the turn limit this adapter sets (error_max_turns) is not the server's
    const why = String(result.result ?? result.api_error_status ?? "");
    out.error = out.error ?? { message: `claude-code ${result.subtype || "error"}: ${why}`.slice(0, 300) };
    out.complete = !result.is_error && !synthetic;
  } else {
    out.error = { message: `claude-code printed no result: ${ended(got)}`.slice(0, 300) };
  }
  return out;
}

serve(one);
