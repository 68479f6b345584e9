"""The agents' corpus (issue 46): the requests real agents send, recorded, as scenarios of the ``agents`` category. A
scenario source: it reads its files and builds requests, nothing more (the recording, which drives the agents
themselves, is ``conformance.agents``).

The corpus is ``conformance/agents/corpus/<agent>-<turn>.json``: each request a real agent sent to the recording
server (``conformance.agents.recorder``), with the agent's name and version, the turn (``first``, ``tool-result``),
what it sends back of the model's own output (``thinking``, ``reasoning``), the path, the headers with secrets
replaced and the body with the model id replaced by ``MODEL``. ``conformance agents record`` refreshes it.
``conformance run`` sends each request (the run's model in place of ``MODEL``, the output capped) as a scenario of
the ``agents`` category; the verdict per agent is "accepts its requests" or which turn was refused and the field
the refusal names.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.model.scenario import CAP_FIELDS

CORPUS = Path(__file__).resolve().parents[1] / "agents" / "corpus"  # (package data of conformance.agents)
MODEL = "MODEL"  # the model id's place in a corpus body
RECORDING_MODEL = "recording-model"
OUTPUT_CAP = 64  # the output tokens a corpus request may ask for in a run (agents ask for up to 32000)
KEYS = {"anthropic": "sk-ant-recording-Q7w2Xk9Lm4Np8Tz", "openai": "sk-recording-Z3v8Rt5Yh1Jc6Wq"}
WORKDIR = "/home/user/project"  # the agent's working directory as the corpus shows it


@dataclass(frozen=True)
class Agent:
    """An agent whose requests are recorded: the client (``conformance.clients.CLIENTS``) that installs and runs it,
    its protocol and route, and the calls the recording server makes it run."""

    name: str
    title: str
    client: str
    protocol: str  # messages | responses | chat | ollama
    route: str
    calls: dict[str, dict[str, Any]] = field(default_factory=dict)  # tool name -> input ({workdir} filled in)
    adapter: str = ""  # the recording driver, when it is not the client's adapter in "record" mode


AGENTS: dict[str, Agent] = {a.name: a for a in (
    Agent("claude-code", "Claude Code", "claude-code", "messages", "/v1/messages",
          {"Read": {"file_path": "{workdir}/notes.txt"}}),
    Agent("codex", "Codex CLI", "codex", "responses", "/v1/responses",
          {"exec_command": {"cmd": "cat notes.txt"}, "shell": {"command": ["cat", "notes.txt"]},
           "shell_command": {"command": "cat notes.txt"}}),
    Agent("openai-agents", "OpenAI Agents SDK", "openai-agents", "chat", "/v1/chat/completions",
          {"get_weather": {"city": "Paris"}}),
    Agent("ollama-python", "ollama (Python) chat() tool loop", "ollama-python", "ollama", "/api/chat",
          {"get_weather": {"city": "Paris"}}, adapter="ollama_agent.py"),
)}


@dataclass(frozen=True)
class Entry:
    """One recorded request of the corpus."""

    agent: str
    version: str
    turn: str
    protocol: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    sends_back: tuple[str, ...] = ()
    name: str = ""  # the file's stem: <agent>-<n>-<turn>

    def request_body(self, model: str) -> dict[str, Any]:
        """The body for a run: the run's model in place of MODEL (everywhere the recording had it), the output
        capped at OUTPUT_CAP tokens (the field the protocol names, added when the agent sent none)."""
        from conformance.protocols import by_name

        text = json.dumps(self.body).replace(json.dumps(MODEL)[1:-1], json.dumps(model)[1:-1])
        body: dict[str, Any] = json.loads(text)
        capped = [k for k in CAP_FIELDS if isinstance(body.get(k), int)]
        for key in capped:
            body[key] = min(body[key], OUTPUT_CAP)
        if not capped:
            *parents, leaf = by_name(self.protocol).cap_field.split(".")
            place = body
            for name in parents:
                place[name] = dict(place.get(name) or {})
                place = place[name]
            place[leaf] = min(int(place.get(leaf) or OUTPUT_CAP), OUTPUT_CAP)
        return body


def corpus(folder: Path = CORPUS) -> list[Entry]:
    """Every recorded request, in the order of their files."""
    out = []
    for path in sorted(folder.glob("*.json")):
        doc = json.loads(path.read_text(encoding="utf-8"))
        out.append(Entry(doc["agent"], doc["version"], doc["turn"], doc["protocol"], doc["path"], doc["headers"],
                         doc["body"], tuple(doc.get("sends_back") or ()), path.stem))
    return out


SCENARIO_PREFIX = "agent-"
DOTTED = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]*(?:\.(?:\d+|[A-Za-z_][A-Za-z0-9_]*))+\b")


def by_scenario(name: str) -> Entry | None:
    """The corpus entry a scenario sends (``agent-<file stem>``), or None."""
    if not name.startswith(SCENARIO_PREFIX):
        return None
    return _by_name().get(name[len(SCENARIO_PREFIX):])


_CACHE: dict[str, Entry] = {}


def _by_name() -> dict[str, Entry]:
    if not _CACHE:
        _CACHE.update({e.name: e for e in corpus()})
    return _CACHE


SCHEMAS = ("parameters", "input_schema", "properties", "schema", "items", "$defs", "definitions")


def _keys(value: Any, out: set[str]) -> None:
    """Every field name and type tag of a request body (for naming the refused one), but inside a tool's JSON
    Schema (whose keywords, maximum or type, an unrelated message may say)."""
    if isinstance(value, dict):
        for key, inner in value.items():
            out.add(key)
            if key == "type" and isinstance(inner, str):
                out.add(inner)
            if key not in SCHEMAS:
                _keys(inner, out)
    elif isinstance(value, list):
        for inner in value[:200]:
            _keys(inner, out)


def refused_field(message: str, body: Any) -> str:
    """The field a refusal names: a dotted path in the message (``messages.1.role``), else the longest field name
    or type tag of the request that the message mentions; "" when it names none."""
    dotted = [m.group(0) for m in DOTTED.finditer(message) if not re.fullmatch(r"[\d.]+", m.group(0))]
    located = re.search(r"\(\s*'body',\s*'(\w+)',\s*(\d+)", message)  # pydantic's loc tuple (FastAPI servers)
    if located:
        dotted.insert(0, f"{located.group(1)}.{located.group(2)}")
    names: set[str] = set()
    _keys(body, names)
    for path in dotted:
        if path.split(".", 1)[0] in names:
            return path
    if re.search(r"context (length|window|size)|too long|maximum context", message, re.I):
        return "the prompt's length (context)"
    mentioned = [n for n in names if len(n) > 2 and re.search(rf"(?<![A-Za-z0-9_]){re.escape(n)}(?![A-Za-z0-9_])",
                                                            message)]
    return max(mentioned, key=len) if mentioned else ""


def scenarios() -> list[Any]:
    """A scenario per corpus request: sent as the agent sent it, with the run's model and the output capped."""
    from conformance.capabilities import CAPABILITIES
    from conformance.model.request import Request
    from conformance.model.scenario import Scenario

    out = []
    for entry in corpus():
        path = entry.path  # as sent, query included (Claude Code's ?beta=true)
        headers = {k: v for k, v in entry.headers.items()
                   if k.startswith(("anthropic-", "x-stainless-", "openai-")) or k in ("user-agent", "x-app")}

        def build(ctx: Any, entry: Entry = entry, path: str = path, headers: dict[str, str] = headers) -> Request:
            return Request(path=path, body=entry.request_body(ctx.model), headers=dict(headers))

        turn = entry.turn + (f", sending back {' and '.join(entry.sends_back)}" if entry.sends_back else "")
        needs = entry.protocol if entry.protocol in CAPABILITIES else None  # chat is no capability: always served
        out.append(Scenario(f"{SCENARIO_PREFIX}{entry.name}", "agents", build, needs=needs,
                            description=f"{AGENTS[entry.agent].title if entry.agent in AGENTS else entry.agent} "
                            f"{entry.version}'s {turn} request on {path.split('?', 1)[0]}, as recorded (the run's "
                            f"model, output capped at {OUTPUT_CAP} tokens).", tags=("agent",)))
    return out
