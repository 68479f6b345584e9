// What the agent adapters share: a scratch working directory and home (the agent writes its config and session
// there, never in the user's), the agent run as a child process with only the environment it needs, and its
// JSON-lines output parsed.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export function scratch() {
  const dir = process.env.CONFORMANCE_AGENT_WORKDIR || mkdtempSync(join(tmpdir(), "conformance-agent-"));
  const home = mkdtempSync(join(tmpdir(), "conformance-agent-home-"));
  if (!process.env.CONFORMANCE_AGENT_WORKDIR) writeFileSync(join(dir, "notes.txt"), "hello from chat-conformance\n");
  return { dir, home, done: () => rmSync(home, { recursive: true, force: true }) };
}

export function run(args, cwd, env, timeoutMs = 90000) {
  const base = { PATH: process.env.PATH || "", LANG: "C.UTF-8" };
  const proc = spawnSync(process.execPath, args, { cwd, env: { ...base, ...env }, timeout: timeoutMs,
                                                    maxBuffer: 64 * 1024 * 1024, stdio: ["ignore", "pipe", "pipe"] });
  const lines = [];
  for (const line of (proc.stdout || "").toString("utf8").split("\n")) {
    if (!line.startsWith("{")) continue;
    try { lines.push(JSON.parse(line)); } catch { /* not an event */ }
  }
  const stderr = (proc.stderr || "").toString("utf8").trim().split("\n").filter(Boolean);
  return { lines, status: proc.status, signal: proc.signal, error: proc.error, stderr };
}

// how a run that printed no end of its own ended: the spawn's error, the signal, or its last line on stderr
export function ended(got) {
  if (got.error) return String(got.error.message);
  if (got.signal) return `killed by ${got.signal}`;
  return got.stderr.at(-1) || `exit ${got.status}`;
}
