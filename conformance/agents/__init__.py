"""Agents, both directions (issue 46): the requests real agents send (a corpus, recorded:
``conformance.scenarios.agents``) and what they make of an answer (their adapters, in ``conformance.clients``,
replaying a run's recorded answers). ``record`` runs an agent against the recording server
(``conformance.agents.recorder``) and writes what it sent to the corpus."""

from __future__ import annotations

import json
import os
import re
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from conformance.scenarios.agents import (
    AGENTS as AGENTS,
)
from conformance.scenarios.agents import (
    CORPUS as CORPUS,
)
from conformance.scenarios.agents import KEYS as KEYS
from conformance.scenarios.agents import MODEL as MODEL
from conformance.scenarios.agents import OUTPUT_CAP as OUTPUT_CAP
from conformance.scenarios.agents import RECORDING_MODEL as RECORDING_MODEL
from conformance.scenarios.agents import WORKDIR as WORKDIR
from conformance.scenarios.agents import Agent as Agent
from conformance.scenarios.agents import Entry as Entry
from conformance.scenarios.agents import by_scenario as by_scenario
from conformance.scenarios.agents import corpus as corpus
from conformance.scenarios.agents import refused_field as refused_field
from conformance.wire.untrusted import json_text


def _sends_back(body: dict[str, Any]) -> tuple[str, ...]:
    """What of the model's own output the history carries back: thinking blocks (with their signatures), reasoning
    items (with encrypted_content)."""
    found = set()
    for msg in body.get("messages") or []:
        if isinstance(msg, dict) and msg.get("role") == "assistant" and isinstance(msg.get("content"), list):
            found |= {"thinking" for b in msg["content"] if isinstance(b, dict) and b.get("type") == "thinking"}
    given = body.get("input")
    items: list[Any] = given if isinstance(given, list) else []
    found |= {"reasoning" for i in items if isinstance(i, dict) and i.get("type") == "reasoning"}
    return tuple(sorted(found))


HOST_HEADERS = ("host", "content-length", "connection", "accept-encoding")
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
HEX_ID = re.compile(r"\b[0-9a-f]{64}\b")


def scrub(text: str, workdir: str, home: str) -> str:
    """A recorded request made fit to publish: the machine's paths, ids and keys replaced."""
    for secret in KEYS.values():
        text = text.replace(secret, "<scrubbed>")
    for path, shown in ((workdir, WORKDIR), (home, "/home/user")):
        if path:
            text = text.replace(path, shown)
    text = re.sub(r"/tmp/conformance-agent-home-[A-Za-z0-9_]+", "/home/user", text)
    text = re.sub(r"-tmp-conformance-agent-[A-Za-z0-9_-]+?(?=/)", "-home-user-project", text)  # as a folder name
    # what changes from one recording to the next: Codex's timestamps, its command runner's chunk id and wall time
    text = re.sub(r'(turn_started_at_unix_ms\\?":)\d+', r"\g<1>0", text)
    text = re.sub(r"Chunk ID: [0-9a-f]+", "Chunk ID: 000000", text)
    text = re.sub(r"Wall time: [0-9.]+ seconds", "Wall time: 0.0000 seconds", text)
    text = UUID.sub("00000000-0000-4000-8000-000000000000", text)
    return HEX_ID.sub("0" * 64, text)


def record(name: str, root: Path, out: Path = CORPUS, timeout: float = 300.0) -> list[Path]:
    """Run the agent (installed pinned by its client, into ``root``) against the recording server; its requests to
    its protocol's route written to ``out`` (the old ones of this agent removed). Returns the files written."""
    from conformance.agents.recorder import Recorder, Script, has_result
    from conformance.clients import ADAPTERS, CLIENTS, environment

    agent = AGENTS[name]
    client = CLIENTS[agent.client]
    command = environment(client, root)
    if agent.adapter:
        command = [command[0], str(ADAPTERS / agent.adapter)]
    else:
        command = [*command[:2], "record"]
    with tempfile.TemporaryDirectory(prefix="conformance-agent-") as workdir:
        Path(workdir, "notes.txt").write_text("hello from chat-conformance\n", encoding="utf-8")
        calls = {tool: json.loads(json.dumps(args).replace("{workdir}", workdir)) for tool, args in agent.calls.items()}
        with Recorder(Script(calls), secret=KEYS["anthropic"]) as rec:
            env = {**os.environ, "ANTHROPIC_BASE_URL": rec.base_url, "ANTHROPIC_API_KEY": KEYS["anthropic"],
                   "OPENAI_BASE_URL": rec.base_url + "/v1", "OPENAI_API_KEY": KEYS["openai"],
                   "OLLAMA_HOST": rec.base_url, "CONFORMANCE_AGENT_WORKDIR": workdir,
                   "CONFORMANCE_AGENT_MODEL": RECORDING_MODEL, "CONFORMANCE_REPLAY_COUNT": "1"}
            proc = subprocess.run(command, env=env, capture_output=True, timeout=timeout, check=False,
                                  stdin=subprocess.DEVNULL, cwd=workdir)
        kept = [r for r in rec.requests if r.method == "POST" and r.path.split("?", 1)[0] == agent.route]
        if not kept:
            tail = proc.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or ["no output"]
            raise RuntimeError(f"{name} sent no request to {agent.route} (it ended: {tail[0][:200]})")
        try:
            printed = json.loads(proc.stdout.decode("utf-8").strip().splitlines()[-1])
        except (ValueError, IndexError):
            printed = {}
        version = str(printed.get("client") or client.version).rpartition(" ")[2] or client.version
        out.mkdir(parents=True, exist_ok=True)
        for old in out.glob(f"{name}-*.json"):
            old.unlink()
        written = []
        for n, req in enumerate(kept, 1):
            body = req.body if isinstance(req.body, dict) else {}
            if isinstance(body.get("client_metadata"), dict):  # Codex's map, in no fixed order
                body["client_metadata"] = dict(sorted(body["client_metadata"].items()))
            turn = "tool-result" if has_result(body) else "first"
            text = scrub(json.dumps(body, ensure_ascii=False), workdir, os.path.expanduser("~"))
            text = text.replace(json.dumps(RECORDING_MODEL)[1:-1], MODEL)
            headers = {k: scrub(v, workdir, "").replace(RECORDING_MODEL, MODEL) for k, v in sorted(req.headers.items())
                       if k not in HOST_HEADERS}
            doc = {"agent": name, "title": agent.title, "version": version, "client": client.label,
                   "turn": turn, "protocol": agent.protocol, "path": req.path, "headers": headers,
                   "sends_back": list(_sends_back(body)), "body": json.loads(text)}
            path = out / f"{name}-{n}-{turn}.json"
            path.write_text(json_text(doc, indent=1) + "\n", encoding="utf-8")
            written.append(path)
    return written


