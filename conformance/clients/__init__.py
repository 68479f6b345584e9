"""Client readiness (issue 23): which real client libraries work with a server, from the bytes it sent.

``conformance clients REPORT_DIR`` replays every recorded streaming exchange of a run (its wire log) into each client
library, as the server sent it: in the arrival chunking the wire log recorded (``recorded``) and in one write
(``whole``), through the replay server (conformance.fuzz.replay). Each client runs an adapter (adapters/) in an
environment of its own, installed on demand from the package registry at the version the report names; the adapter
prints what the library's user ends up with, and ``fuzz.client_fuzz.compare`` holds it to what the bytes say a correct
client assembles. Per client the verdict is:

- ``works``: every exchange assembled as the bytes say;
- ``works with limits``: what differs is either a detail a user can live without (reasoning not surfaced or left
  inline, usage, the finish reason, a refusal or a filter verdict not reported, a stream without [DONE] taken as
  whole), or the client's own limit: a stream the suite judged conformant (in its bytes: headers aside), or an
  exception the client raises by design (the openai helper's on any answer cut by max_tokens), or a deviation the
  client reads as the server meant it (``recovered``: a tool name sent in every chunk, taken once), with the
  scenarios and what differs;
- ``breaks``: on an exchange that fails a must or should rule, the client raised where the bytes hold an answer, or
  its content, tool calls, completeness or error differ: the server's deviation breaks that client's users. The first
  such scenario, the rules its stream fails, what happened, and a reproducer (the exchange written beside the
  report as a fixture, and the command that replays it into the client);
- ``not checked``: the client could not be installed or started here, with the reason (never guessed).
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import venv
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.wire.untrusted import json_text

ADAPTERS = Path(__file__).resolve().parent / "adapters"
CHUNKINGS = ("recorded", "whole")  # the default; also: adversarial (cuts inside UTF-8, line ends, field names), random
ALL_CHUNKINGS = (*CHUNKINGS, "adversarial", "random", "hypothesis")
HYPOTHESIS_EXAMPLES = 4  # client runs Hypothesis draws cuts for (every exchange of the run cut in each)
HYPOTHESIS_SHRINKS = 12  # more client runs it may spend shrinking the cuts of an example a client read differently
HYPOTHESIS_MAX_CUTS = 8  # cuts per exchange (Hypothesis draws them for a hundred exchanges at once)
# a difference in one of these keys is a limit: the user gets the answer, without that detail (complete: the client
# cannot tell a cut stream from a whole one, as when it takes a stream without [DONE] as whole)
# (recovered: the client read a deviation the way the server meant it, as some clients do on purpose)
# (asked again: an agent sent another request after the answer, which the recording cannot answer)
LIMIT_KEYS = ("reasoning", "finish_reason", "usage", "refusal", "filtered", "complete", "recovered", "asked again")
REPLAY_ENDED = "replay: the recording has no answer"
# rules of a stream's headers that say nothing of the bytes a client assembles (caching, proxies' buffering, request
# ids, vendor headers): a client that fails on a stream failing only these fails on a legal answer, its own limit
HEADER_RULES = frozenset({"TRN-003", "TRN-004", "TRN-006", "TRN-013", "TRN-015", "TRN-016", "TRN-022"})


@dataclass(frozen=True)
class Client:
    """One client library: how to install it (pinned) and the adapter that drives it."""

    name: str
    label: str  # the library and the call, as a report names it
    language: str  # python | node
    packages: tuple[str, ...]  # pinned requirements (python: name==version; node: name@version, locked in lock_dir)
    adapter: str  # the adapter's file under adapters/ (node: under adapters/node/)
    args: tuple[str, ...] = ()
    protocol: str = "chat"  # a protocol's name (conformance.protocols.REGISTRY): which recorded exchanges it reads
    # exceptions the client raises by design on answers that are legal: its own limits, whatever the server
    raises_by_design: tuple[str, ...] = ()
    lock_dir: str = ""  # node: the folder under adapters/node/ whose package.json and package-lock.json it installs
    kind: str = "library"  # library | agent (an agent's adapter runs the agent itself for one turn)
    # why it is given no answer that calls a tool (an agent that would run the call and ask again, with no turn limit)
    no_calls: str = ""
    one_run_each: bool = False  # a run of the client per exchange, its later requests refused (agents whose turn
    #                             may make more than one request)

    @property
    def version(self) -> str:
        first = self.packages[0]
        return first.split("==", 1)[-1] if self.language == "python" else first.rpartition("@")[2]


CLIENTS: dict[str, Client] = {c.name: c for c in (
    Client("openai-python", "openai (Python) chat.completions.create(stream=True)", "python", ("openai==3.57.0",),
           "openai_python.py", ("stream",)),
    # openai-python's stream helper raises on a length or content_filter finish (openai/lib/_parsing/_completions.py,
    # "Could not parse response content as the length limit was reached"), as for every server's answer cut by a cap
    Client("openai-python-helper", "openai (Python) chat.completions.stream() helper", "python", ("openai==3.57.0",),
           "openai_python.py", ("helper",),
           raises_by_design=("LengthFinishReasonError", "ContentFilterFinishReasonError")),
    Client("openai-python-completions", "openai (Python) completions.create(stream=True)", "python",
           ("openai==3.57.0",), "openai_python.py", ("completions",), protocol="completions"),
    # with a response_format langchain-openai streams through openai-python's parse helper, which raises on a length
    # or content_filter finish whatever the server (langchain_openai/chat_models/base.py, _stream with
    # response_format: client.beta.chat.completions.stream)
    Client("langchain-openai", "langchain-openai ChatOpenAI.stream", "python", ("langchain-openai==1.8.1",),
           "langchain_openai_stream.py",
           raises_by_design=("LengthFinishReasonError", "ContentFilterFinishReasonError")),
    Client("litellm", "litellm completion(stream=True), openai/<model>", "python", ("litellm==1.108.7",),
           "litellm_python.py"),
    Client("ollama-python", "ollama (Python) chat/generate(stream=True)", "python", ("ollama==0.6.3",),
           "ollama_python.py", protocol="ollama"),
    # the last releases that run on Node 20 (openai 7 and ai 7 need Node 22)
    Client("openai-node", "openai (Node) chat.completions.create({stream: true})", "node", ("openai@6.30.1",),
           "openai_node.mjs", ("stream",), lock_dir="openai-node"),
    Client("openai-node-responses", "openai (Node) responses.stream() finalResponse()", "node", ("openai@6.30.1",),
           "openai_node.mjs", ("responses",), protocol="responses", lock_dir="openai-node"),
    # Anthropic's SDKs: messages.stream() with the message they accumulate, and create(stream=True) read raw
    Client("anthropic-python", "anthropic (Python) messages.stream() get_final_message()", "python",
           ("anthropic==2.17.0",), "anthropic_python.py", ("stream",), protocol="messages"),
    Client("anthropic-python-create", "anthropic (Python) messages.create(stream=True)", "python",
           ("anthropic==2.17.0",), "anthropic_python.py", ("create",), protocol="messages"),
    Client("anthropic-node", "@anthropic-ai/sdk (Node) messages.stream() finalMessage()", "node",
           ("@anthropic-ai/sdk@1.17.0",), "anthropic_node.mjs", ("stream",), protocol="messages",
           lock_dir="anthropic-node"),
    Client("anthropic-node-create", "@anthropic-ai/sdk (Node) messages.create({stream: true})", "node",
           ("@anthropic-ai/sdk@1.17.0",), "anthropic_node.mjs", ("create",), protocol="messages",
           lock_dir="anthropic-node"),
    # agents: the agent itself, one turn, against the replay (the request side is the corpus, conformance.agents)
    Client("claude-code", "Claude Code claude -p --output-format stream-json --max-turns 1", "node",
           ("@anthropic-ai/claude-code@2.1.332",), "claude_code.mjs", protocol="messages", lock_dir="claude-code",
           kind="agent", one_run_each=True),
    Client("codex", "Codex CLI codex exec --json, a custom provider on the Responses wire", "node",
           ("@openai/codex@0.171.0",), "codex.mjs", protocol="responses", lock_dir="codex", kind="agent",
           one_run_each=True,
           no_calls="codex exec has no turn limit: it runs a recorded call of a tool it does not have, sends the "
           "result and waits for an answer the recording does not have"),
    Client("openai-agents", "OpenAI Agents SDK Runner.run_streamed(max_turns=1), OpenAIChatCompletionsModel",
           "python", ("openai-agents==0.24.0",), "openai_agents.py", kind="agent",
           # the SDK raises on any answer cut by length with no text or call (agents/models/chatcmpl_stream_handler),
           # the reference server's conformant one too: its own limit
           raises_by_design=("ModelBehaviorError: Chat Completions stream terminated with finish_reason='length'",)),
    Client("vercel-ai", "Vercel AI SDK streamText + @ai-sdk/openai-compatible", "node",
           ("ai@6.0.333", "@ai-sdk/openai-compatible@2.0.92", "zod@4.1.12"), "vercel_ai.mjs", lock_dir="vercel-ai"),
)}


def default_dir() -> Path:
    """Where client environments live: CONFORMANCE_CLIENTS_DIR, else .conformance-clients in the working directory
    (a project-local cache: nothing is installed globally)."""
    return Path(os.environ.get("CONFORMANCE_CLIENTS_DIR") or ".conformance-clients").resolve()


class NotInstalled(Exception):
    """The client cannot be installed or started here (the reason is the message)."""


def environment(client: Client, root: Path, install: bool = True, timeout: float = 900.0) -> list[str]:
    """The command that runs the client's adapter, its environment installed first if it is not yet (pinned, from
    the package registry, into ``root/<name>-<version>``); ``NotInstalled`` says why it cannot be."""
    if client.language == "node":
        return _node_environment(client, root, install, timeout)
    home = root / f"{client.name}-{client.version}"
    python = home / ("Scripts" if os.name == "nt" else "bin") / "python"
    marker = home / "installed.json"
    if not marker.is_file():
        if not install:
            raise NotInstalled(f"not installed in {home} (run without --no-install to install it)")
        try:
            venv.EnvBuilder(with_pip=True, clear=True).create(home)
            # --no-compile: the adapter imports a few modules of a large package (litellm's install took 61 s with
            # every .pyc written, 35 s without)
            proc = subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-compile",
                                   "--disable-pip-version-check", *client.packages], capture_output=True,
                                  timeout=timeout, check=False)
        except (OSError, subprocess.SubprocessError) as exc:
            raise NotInstalled(f"cannot create its environment in {home}: {exc}") from None
        if proc.returncode != 0:
            tail = proc.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or ["no output"]
            raise NotInstalled(f"pip install {' '.join(client.packages)} failed: {tail[0][:200]}")
        marker.write_text(json.dumps({"packages": list(client.packages)}) + "\n", encoding="utf-8")
    return [str(python), str(ADAPTERS / client.adapter), *client.args]


def _node_environment(client: Client, root: Path, install: bool, timeout: float) -> list[str]:
    """A Node client: its locked package.json installed with ``npm ci`` into ``root/<lock_dir>-<version>`` (npm's
    cache under ``root/.npm``: nothing global), the adapters copied beside its node_modules (an ES module resolves
    its imports from where it lies)."""
    import shutil

    lock = ADAPTERS / "node" / client.lock_dir
    home = root / f"{client.lock_dir}-{client.version}"
    marker = home / "installed.json"
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        raise NotInstalled("Node.js is not installed here (node and npm are needed on PATH)")
    if not marker.is_file():
        if not install:
            raise NotInstalled(f"not installed in {home} (run without --no-install to install it)")
        home.mkdir(parents=True, exist_ok=True)
        for name in ("package.json", "package-lock.json"):
            shutil.copyfile(lock / name, home / name)
        try:
            proc = subprocess.run([npm, "ci", "--no-audit", "--no-fund", "--ignore-scripts", "--cache",
                                   str(root / ".npm")], cwd=home, capture_output=True, timeout=timeout, check=False,
                                  stdin=subprocess.DEVNULL)
        except (OSError, subprocess.SubprocessError) as exc:
            raise NotInstalled(f"cannot install it in {home}: {exc}") from None
        if proc.returncode != 0:
            lines = [ln for ln in proc.stderr.decode("utf-8", "replace").splitlines() if "ERR" in ln] or ["no output"]
            raise NotInstalled(f"npm ci of {' '.join(client.packages)} failed: {lines[0][:200]}")
        marker.write_text(json.dumps({"packages": list(client.packages)}) + "\n", encoding="utf-8")
    for script in (ADAPTERS / "node").glob("*.mjs"):  # the adapters as this version of the suite has them
        shutil.copyfile(script, home / script.name)
    return [node, str(home / client.adapter), *client.args]


@dataclass
class ExchangeResult:
    """One recorded exchange replayed into one client, in one chunking."""

    scenario: str
    fixture: str  # the wire log's stem
    chunking: str
    problems: list[str]
    got: dict[str, Any] | None = None
    failed: tuple[str, ...] = ()  # the must and should rules of the answer's bytes (not headers) the exchange fails
    by_design: bool = False  # the client raised what it raises by design on a legal answer
    cuts: list[int] | None = None  # hypothesis: where the body was cut (the smallest example found)

    @property
    def breaks(self) -> bool:
        """A difference that loses the answer, on a stream that deviates (on a conformant one, or an exception the
        client raises by design whatever the server, it is the client's own limit)."""
        return bool(self.failed) and not self.by_design and any(not p.startswith(LIMIT_KEYS) for p in self.problems)


@dataclass
class ClientVerdict:
    """What one client made of a run."""

    client: Client
    verdict: str  # works | works with limits | breaks | not checked
    reason: str = ""  # not checked: why; breaks: what happened first
    checked: int = 0  # exchange replays
    results: list[ExchangeResult] = field(default_factory=list)
    reproducer: dict[str, Any] | None = None  # breaks: the fixture written and the command that replays it
    version: str = ""

    def to_json(self) -> dict[str, Any]:
        limits: dict[str, list[str]] = {}
        examples: dict[str, str] = {}
        for r in self.results:
            if r.problems and not r.breaks:
                for p in r.problems:
                    key = p.split(":", 1)[0]
                    examples.setdefault(key, f"{r.scenario}: {p}"[:400])
                    limits.setdefault(key, [])
                    if r.scenario not in limits[key]:
                        limits[key].append(r.scenario)
        broken = [r for r in self.results if r.breaks]
        return {
            "client": self.client.name, "label": self.client.label, "language": self.client.language,
            "packages": list(self.client.packages), "version": self.version, "verdict": self.verdict,
            "reason": self.reason, "checked": self.checked,
            "limits": [{"what": k, "scenarios": v, "example": examples[k]} for k, v in sorted(limits.items())],
            "breaks": [{"scenario": r.scenario, "exchange": r.fixture, "chunking": r.chunking, "problems": r.problems,
                        "fails": list(r.failed), **({"cuts": r.cuts} if r.cuts else {})} for r in broken],
            "reproducer": self.reproducer,
        }


def streamed_exchanges(report_dir: Path, protocol: str) -> list[tuple[str, Any]]:
    """(wire log stem, exchange) for every recorded POST of the protocol that asked for a stream: answered, or refused
    with an error status (a client must report that as an error)."""
    from conformance.checks.transport import CUT_BY_SERVER
    from conformance.model import BAD_INPUT
    from conformance.protocols import by_name

    chosen = by_name(protocol)
    out = []
    for stem, ex in _recorded(report_dir):
        if ex.protocol is not chosen or ex.method != "POST" or ex.status is None or ex.endpoint == "ollama-pull":
            continue
        request = ex.request if isinstance(ex.request, dict) else {}
        asked = request.get("stream", chosen.streams_by_default)
        obs = ex.observations
        # cut by the suite (a disconnect, a limit); a body the server cut is replayed cut (fuzz.replay)
        cut = obs.disconnect or (obs.aborted and obs.aborted not in CUT_BY_SERVER) \
            or obs.disconnected_after_events is not None
        # what a client asking as the adapters do (one choice, a valid request) could get, whole as it was sent
        own = ex.intent not in BAD_INPUT and request.get("n", 1) in (1, None)
        if asked is True and own and not cut and (ex.status == 200 or ex.status >= 400):
            out.append((stem, ex))
    return out


def _recorded(report_dir: Path) -> list[tuple[str, Any]]:
    """(wire log stem, exchange) for every exchange of the run in ``report_dir``, in run order."""
    from conformance.engine.wirelog import WIRE_DIR, load

    _, outcomes = load(report_dir)
    wire = report_dir if (report_dir / "run.json").is_file() else report_dir / WIRE_DIR
    doc = json.loads((wire / "run.json").read_text(encoding="utf-8"))
    return [pair for item, outcome in zip(doc["outcomes"], outcomes, strict=True)
            for pair in zip(item["exchanges"], outcome.exchanges, strict=True)]


def _asked(ex: Any) -> str:
    """An exchange's request as a key, streaming aside (stream and stream_options), with its path."""
    request = ex.request if isinstance(ex.request, dict) else {}
    return json_text([ex.path, {k: v for k, v in request.items() if k not in ("stream", "stream_options")}],
                     sort_keys=True)


def unstreamed_twins(report_dir: Path, exchanges: list[tuple[str, Any]]) -> dict[str, tuple[str, Any]]:
    """For each streamed exchange, the server's own unstreamed answer to the same request in the same run (a
    scenario's json twin, a parity scenario's unstreamed request), where it answered one with a 2xx: what the server
    answers an agent that asks again without streaming (Claude Code's fallback)."""
    answered: dict[str, tuple[str, Any]] = {}
    for stem, ex in _recorded(report_dir):
        request = ex.request if isinstance(ex.request, dict) else {}
        streamed = request.get("stream", getattr(ex.protocol, "streams_by_default", False))
        if ex.method == "POST" and streamed is not True and ex.status is not None and 200 <= ex.status < 300:
            answered.setdefault(_asked(ex), (stem, ex))
    keys = {stem: _asked(ex) for stem, ex in exchanges}
    return {stem: answered[key] for stem, key in keys.items() if key in answered}


def _fixture(ex: Any, stem: str, folder: Path, profile: str, write: bool = False) -> Any:
    """The exchange as a fixture the replay serves (in memory); with ``write``, also written in ``folder`` (sidecar
    and body, as ``conformance record`` writes them) for a reproducer."""
    from conformance.engine.record import SUFFIX, sidecar
    from conformance.exchange import analyze
    from conformance.fixtures import Fixture, load

    body_path = folder / f"{stem}{SUFFIX.get(analyze(ex, profile).format, '.body')}"
    if not write:
        return Fixture(stem, body_path, {}, ex, profile)
    folder.mkdir(parents=True, exist_ok=True)
    body_path.write_bytes(ex.body)
    meta = sidecar(ex, f"the wire log's {stem}", profile)
    (folder / f"{stem}.json").write_text(json_text(meta, indent=2) + "\n", encoding="utf-8")
    return load(folder / f"{stem}.json")


def recorded_cuts(ex: Any) -> list[int]:
    """The cut points the wire log recorded: where each read of the body ended."""
    size = len(ex.body)
    return sorted({total for _, total in ex.arrivals if 0 < total < size})


def _raw_content(a: Any) -> str | None:
    """The first choice's content as sent, inline <think> markup included, when it has some (else None)."""
    choices = getattr(a.answer, "choices", None)
    choice = choices.get(0) if isinstance(choices, dict) else None
    think = getattr(choice, "think", None)  # chat's choices (another protocol's have no inline markup to keep)
    return choice.raw_content if choice is not None and think is not None and think.seen else None


def _batch(command: list[str], server: Any, fixtures: list[Any], timeout: float) -> list[tuple[Any, list[str]]]:
    """One run of the client for every fixture, in turn (the adapter makes CONFORMANCE_REPLAY_COUNT requests and
    prints a JSON line for each): (what it printed, or None with why) per fixture."""
    from conformance.fuzz.client_fuzz import MISSING_MODULE, ClientCannotRun
    from conformance.fuzz.replay import served_path, write_requests

    server.fixture, server.served = (fixtures[0] if server.limit is not None else None), 0
    server.wrong_paths.clear()
    server.wrong_at.clear()
    import tempfile

    from conformance.protocols import client_environment

    with tempfile.TemporaryDirectory(prefix="conformance-replay-") as folder:
        requests = write_requests(folder, fixtures)  # each exchange's recorded request: its tools, choice, options
        env = {**os.environ, **client_environment(server.base_url, server.host_url),
               "CONFORMANCE_REPLAY_COUNT": str(len(fixtures)), "CONFORMANCE_REPLAY_REQUESTS": str(requests),
               "CONFORMANCE_REPLAY_PATHS": ",".join(served_path(fx) for fx in fixtures)}
        try:
            proc = subprocess.run(command, env=env, capture_output=True, timeout=timeout * len(fixtures) + 30,
                                  check=False, stdin=subprocess.DEVNULL)
            stdout, stderr = proc.stdout, proc.stderr
        except subprocess.TimeoutExpired as exc:
            stdout, stderr = exc.stdout or b"", exc.stderr or b""
        except OSError as exc:
            raise ClientCannotRun(f"the client could not start: {exc.strerror or exc}") from None
    lines = [ln for ln in stdout.decode("utf-8", "replace").splitlines() if ln.startswith("{")]
    if not lines:
        missing = MISSING_MODULE.search(stderr.decode("utf-8", "replace"))
        if missing:
            raise ClientCannotRun(f"the client cannot start: {missing.group(0)}")
    out: list[tuple[Any, list[str]]] = []
    for index in range(len(fixtures)):
        try:
            got = json.loads(lines[index]) if index < len(lines) else None
        except ValueError:
            got = None
        if isinstance(got, dict):
            out.append((got, []))
        else:
            tail = stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or ["no output"]
            out.append((None, [f"error: the client printed nothing for this exchange (it ended: {tail[0][:200]})"]))
    return out


def _agent_batch(command: list[str], server: Any, fixtures: list[Any], timeout: float) -> list[tuple[Any, list[str]]]:
    """An agent's run per fixture: the recorded answer to its first request, a 503 to any later one (a turn the
    recording does not have: the agent continuing after max_tokens, or sending a tool's result); what the agent
    made of the first answer is what its adapter prints. Where the recorded answer was itself an error, the agent's
    retry meets the replay's 503 where it would meet the server's failure again: the error it reports stands."""
    from conformance.fuzz.client_fuzz import expected

    out: list[tuple[Any, list[str]]] = []
    for fx in fixtures:
        server.limit, server.beyond, server.fallbacks = 1, 0, 0
        [(got, problems)] = _batch(command, server, [fx], timeout)
        if server.fallbacks:  # the server's own unstreamed answer to the same request reached the agent
            twin = server.unstreamed[id(fx)]
            problems = [*problems, f"asked again without streaming: after the stream the agent sent "
                        f"the request again unstreamed (its fallback), and the server's own unstreamed answer to the same "
                        f"request ({twin.name}) answered it"]
        error = (got or {}).get("error")
        if server.beyond and isinstance(error, dict) and REPLAY_ENDED in str(error.get("message", "")) \
                and not expected(fx).get("error"):  # (an answer that was an error: the agent retried, and reported)
            got = {**(got or {}), "error": None}  # the 503 was the replay's, not the server's
            problems = [*problems, "asked again: the agent sent another request after this answer (it ran a call, or "
                        "went on); the recording has no answer for it"]
        out.append((got, problems))
    server.limit = None
    return out


def _hypothesis_batch(command: list[str], fixtures: list[Any], whole: list[tuple[Any, list[str]]], timeout: float,
                      examples: int = HYPOTHESIS_EXAMPLES, shrinks: int = HYPOTHESIS_SHRINKS, seed: int = 0,
                      ) -> tuple[list[tuple[Any, list[str]]], list[list[int] | None], dict[int, list[str]]]:
    """Hypothesis byte splits of every exchange at once: each example is one run of the client over all of them,
    each body cut where Hypothesis chose (``fuzz.strategies.chunkings``: anywhere, or at the cuts that break naive
    decoders). An example in which the client reads any exchange differently from the same bytes in one write fails
    the property, and Hypothesis shrinks its cuts, within a budget of client runs. Returns the answers and cuts of
    the smallest such example (or of the last example when the client read every cut as it read the whole body),
    and the paths the client asked for wrongly."""
    from hypothesis import strategies as st

    from conformance.fuzz.client_fuzz import budgeted_search, compare
    from conformance.fuzz.replay import ReplayServer
    from conformance.fuzz.strategies import chunkings

    last: dict[str, Any] = {}
    found: dict[str, Any] = {}
    with ReplayServer(fixtures, chunking="whole") as server:

        def check(drawn: tuple[list[int], ...]) -> None:
            table = {id(fx): list(c) for fx, c in zip(fixtures, drawn, strict=True)}
            server.cuts_of = lambda fx: table[id(fx)]
            answers = _batch(command, server, fixtures, timeout)
            wrong = {n: [p for i, p in server.wrong_at if i == n] for n in range(len(fixtures))}
            last.update(answers=answers, cuts=drawn, wrong=wrong)
            differs = [n for n, ((got, _), (want, _)) in enumerate(zip(answers, whole, strict=True))
                       if (got is None) != (want is None) or (got is not None and compare(want, got))]
            if differs:
                size = sum(len(drawn[n]) for n in differs)
                if not found or (len(differs), size) <= (len(found["differs"]), found["size"]):
                    found.update(answers=answers, cuts=drawn, wrong=wrong, differs=differs, size=size)
                raise AssertionError(f"read differently when cut: {differs}")

        strategy = st.tuples(*(chunkings(server.served_body(fx), max_cuts=HYPOTHESIS_MAX_CUTS) for fx in fixtures))
        budgeted_search(strategy, check, examples, shrinks, seed)
    chosen = found or last
    if not chosen:  # every example rejected (a budget of 0): nothing was cut
        return whole, [None] * len(fixtures), {}
    return chosen["answers"], [list(c) for c in chosen["cuts"]], chosen["wrong"]


def _recovered_terminal(fx: Any, got: dict[str, Any] | None, found: list[str]) -> list[str]:
    """A Responses stream whose terminal response object says other than its deltas (RSP-009): a client that
    returns the terminal object (openai-node's finalResponse) read what the server's own last word says. Its
    content and tool calls, held to that object, are then recovered, not lost."""
    import dataclasses

    from conformance.exchange import analyze
    from conformance.fuzz.client_fuzz import compare
    from conformance.protocols.responses.assembler import Answer, from_response
    from conformance.protocols.responses.protocol import client_view

    if got is None or not any(p.startswith(("content:", "tool_calls:")) for p in found):
        return found
    a = analyze(fx.exchange, fx.profile)
    answer = a.answer
    if not isinstance(answer, Answer) or not isinstance(answer.response, dict) or not answer.response.get("output"):
        return found
    final = from_response(answer.response)
    final.terminal, final.errors = answer.terminal, answer.errors
    view = client_view(dataclasses.replace(a, answer=final))  # the same analysis, its answer the terminal object's
    if any(p.startswith(("content:", "tool_calls:")) for p in compare(view, got)):
        return found
    return [("recovered: the terminal response object's " + p.split(":", 1)[0] + ", which its deltas contradict "
             "(RSP-009)") if p.startswith(("content:", "tool_calls:")) else p for p in found]


def _shown(path: Path, base: Path | None = None) -> str:
    """A path as a published report shows it: relative to ``base`` (else the working directory) when under it; a
    program found on PATH by its name."""
    import shutil

    resolved = path.resolve()
    try:
        return str(resolved.relative_to((base or Path.cwd()).resolve()))
    except ValueError:
        pass
    found = shutil.which(path.name) if base is None else None
    if found and Path(found).resolve() == resolved:
        return path.name
    return str(path)


def check_client(client: Client, command: list[str], exchanges: list[tuple[str, Any]], work: Path,
                 chunkings: tuple[str, ...] = CHUNKINGS, timeout: float = 60.0, profile: str = "openai",
                 report_dir: Path | None = None) -> ClientVerdict:
    """Replay each exchange into the client, in each chunking; the verdict."""
    from conformance.checks import evaluate
    from conformance.exchange import analyze
    from conformance.fuzz.client_fuzz import ClientCannotRun, _judge
    from conformance.fuzz.replay import ReplayServer

    fixtures = [_fixture(ex, stem, work, profile) for stem, ex in exchanges]
    failed = {stem: tuple(v.rule.id for v in evaluate(analyze(ex, profile)) if v.outcome == "failed"
                          and v.rule.level in ("must", "should") and v.rule.protocol != "http"
                          and v.rule.id not in HEADER_RULES) for stem, ex in exchanges}
    raw = {stem: _raw_content(analyze(ex, profile)) for stem, ex in exchanges}
    cuts = {id(fx): recorded_cuts(ex) for fx, (_, ex) in zip(fixtures, exchanges, strict=True)}
    results: list[ExchangeResult] = []
    version = ""
    batch = _agent_batch if client.one_run_each else _batch
    twins = unstreamed_twins(report_dir, exchanges) if client.one_run_each and report_dir is not None else {}
    unstreamed = {id(fx): _fixture(twins[stem][1], twins[stem][0], work, profile)
                  for fx, (stem, _) in zip(fixtures, exchanges, strict=True) if stem in twins}
    if client.one_run_each:  # one run per exchange: Hypothesis' many runs of every exchange would take minutes
        chunkings = tuple(c for c in chunkings if c != "hypothesis") or ("whole",)
    try:
        whole_answers: list[tuple[Any, list[str]]] | None = None
        for chunking in chunkings:
            served = chunking if chunking in ("adversarial", "random") else "whole"  # seeded: the same cuts each run
            drawn: list[list[int] | None] = [None] * len(fixtures)
            if chunking == "hypothesis":
                if whole_answers is None:
                    with ReplayServer(fixtures, chunking="whole") as server:
                        whole_answers = _batch(command, server, fixtures, timeout)
                answers, drawn, wrong = _hypothesis_batch(command, fixtures, whole_answers, timeout)
            else:
                with ReplayServer(fixtures, chunking=served) as server:
                    server.cuts_of = (lambda fx: cuts[id(fx)]) if chunking == "recorded" else None
                    server.unstreamed = unstreamed
                    answers = batch(command, server, fixtures, timeout)
                    wrong = {n: [p for i, p in server.wrong_at if i == n] for n in range(len(fixtures))}
                if chunking == "whole":
                    whole_answers = answers
            for n, (fx, (stem, ex), (got, problems)) in enumerate(zip(fixtures, exchanges, answers, strict=True)):
                if got is not None and not version:
                    version = str(got.get("client", ""))
                found = _judge(fx, got, problems, wrong[n])
                if got is not None and raw[stem] is not None and got.get("content") == raw[stem]:
                    found = [("reasoning: the inline <think> markup kept in content (seed 003 §4: a carrier a client "
                              "separates)") if p.startswith("content:") else p for p in found]
                found = _recovered_terminal(fx, got, found)
                error = (got or {}).get("error")
                message = str(error.get("message", "")) if isinstance(error, dict) else ""
                results.append(ExchangeResult(ex.scenario, stem, chunking, found, got, failed[stem],
                                              message.startswith(client.raises_by_design)
                                              if client.raises_by_design else False, drawn[n]))
    except ClientCannotRun as exc:
        return ClientVerdict(client, "not checked", str(exc))
    verdict = ClientVerdict(client, "works", checked=len(results), results=results, version=version)
    broken = [r for r in results if r.breaks]
    if broken:
        first = broken[0]
        raised = (first.got or {}).get("error") if first.got else None
        what = f"raised {raised['message']}" if isinstance(raised, dict) and raised.get("message") else first.problems[0]
        what = what if len(what) <= 400 else what[:399] + "…"  # the whole difference is in clients.json's breaks
        verdict.verdict, verdict.reason = "breaks", f"{first.scenario} (fails {', '.join(first.failed)}): {what}"
        _fixture(dict(exchanges)[first.fixture], first.fixture, work, profile, write=True)
        fx_path = work / f"{first.fixture}.json"
        whole = any(r.breaks and r.fixture == first.fixture and r.chunking == "whole" for r in results)
        verdict.reproducer = {  # no path of this machine outside the working directory: the report is published
            "fixture": _shown(fx_path, report_dir), "chunking": "whole" if whole else first.chunking,
            **({"cuts": first.cuts} if first.cuts and not whole else {}),
            "command": " ".join(shlex.quote(part) for part in [
                "conformance", "fuzz-client", "--fixtures", _shown(fx_path), "--chunking", "whole" if whole else "random",
                "--protocol", client.protocol, "--", *(_shown(Path(c)) if os.sep in c else c for c in command)]),
        }
    elif any(r.problems for r in results):
        verdict.verdict = "works with limits"
        verdict.reason = "differs in " + ", ".join(sorted({p.split(":", 1)[0] for r in results for p in r.problems}))
    return verdict


def _calls(stem: str, ex: Any, profile: str) -> bool:
    """Whether the exchange's answer calls a tool (as a correct client reads it)."""
    from conformance.fuzz.client_fuzz import expected

    return bool(expected(_fixture(ex, stem, Path("."), profile)).get("tool_calls"))


def run_clients(report_dir: Path, names: list[str], root: Path, install: bool = True,
                chunkings: tuple[str, ...] = CHUNKINGS, timeout: float = 60.0) -> list[ClientVerdict]:
    """Every named client against the run in ``report_dir``; clients.json written beside its reports."""
    from conformance.engine.wirelog import load

    run, _ = load(report_dir)
    profile = str(run.settings.get("profile") or "openai")
    verdicts = []
    by_protocol: dict[str, list[tuple[str, Any]]] = {}
    for name in names:
        client = CLIENTS[name]
        if client.protocol not in by_protocol:
            by_protocol[client.protocol] = streamed_exchanges(report_dir, client.protocol)
        exchanges = by_protocol[client.protocol]
        if client.no_calls:
            exchanges = [(stem, ex) for stem, ex in exchanges if not _calls(stem, ex, profile)]
        if not any(ex.status == 200 for _, ex in exchanges):
            statuses = sorted({str(ex.status) for _, ex in exchanges})
            verdicts.append(ClientVerdict(client, "not checked", f"no streamed {client.protocol} answer to replay: "
                                          + (f"the server refused every such request ({', '.join(statuses)})"
                                             if statuses else "the run sent no such request")))
            continue
        try:
            command = environment(client, root, install)
        except NotInstalled as exc:
            verdicts.append(ClientVerdict(client, "not checked", str(exc)))
            continue
        verdicts.append(check_client(client, command, exchanges, report_dir / "clients" / client.name, chunkings,
                                     timeout, profile, report_dir))
    entries = {v.client.name: v.to_json() for v in verdicts}
    try:  # a run of some clients keeps the verdicts of the others
        before = json.loads((report_dir / "clients.json").read_text(encoding="utf-8")).get("clients", [])
    except (OSError, ValueError, AttributeError):
        before = []
    for entry in before if isinstance(before, list) else []:
        if isinstance(entry, dict) and entry.get("client") in CLIENTS and entry["client"] not in entries:
            entries[entry["client"]] = entry
    doc = {"format": "chat-conformance-clients/1", "chunkings": list(chunkings),
           "clients": [entries[name] for name in CLIENTS if name in entries]}
    (report_dir / "clients.json").write_text(json_text(doc, indent=2) + "\n", encoding="utf-8")
    return verdicts
