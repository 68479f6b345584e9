"""The real-server matrix (`nox -s peers`): install each peer server into its own virtual environment under
.peers/ (git-ignored; what is there already is kept), serve the bundled model with it on 127.0.0.1, run
`conformance run` against it twice, stop it by its process id, and write reports/<server>/ (the reports and
the wire log of the first run), reports/<server>/RUNS.json (both runs' verdicts, whether they agree, the
version, the wall times) and the matrix of all of them (reports/matrix.md and matrix.html).

    python peers/run.py [--only NAME ...] [--list]
    python peers/run.py --category responses [--only NAME ...]

With --category, each chosen peer is run once with only that category's scenarios (a protocol a peer gained after
its published run: the Responses API), into reports/<server>/<category>/ with CATEGORY.json beside it, and its
fixtures into fixtures/<server>-<category>/; the published report of the whole suite is left as it is.

A peer that cannot be installed or started here is reported as such in reports/peers.json and the matrix
notes, never guessed at. Nothing is downloaded at run time but the peers' own packages from the registries.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PEERS = Path(os.environ.get("CONFORMANCE_PEERS_DIR") or ROOT / ".peers")  # the venvs, the model, the builds
REPORTS = ROOT / "reports"


@dataclass
class Peer:
    """One real server: how to install it, prepare its model, start it and read its version."""

    name: str
    title: str
    install: list[list[str]]  # pip argument lists, run in the peer's venv
    start: Callable[[Path, Path, int], list[str]]  # (venv, model dir, port) -> argv
    version: str  # a Python expression printed in the venv (the server's version)
    env: dict[str, str] = field(default_factory=dict)
    prepare: Callable[[Path, Path], Path] | None = None  # (venv, bundled model) -> the model the server serves
    base_path: str = "/v1"
    backend: str | None = None  # another peer this one proxies (started first, on its own port)
    ready_timeout: float = 180.0
    run_args: list[str] = field(default_factory=list)  # extra `conformance run` options
    api_key: str | None = None  # sent by the readiness probe and the suite (`--api-key`)
    model_arg: bool = False  # the suite names the model by its path (`--model`): the server lists none it serves
    install_env: dict[str, str] = field(default_factory=dict)  # the environment of its pip installs
    build: Callable[[Path, Path], None] | None = None  # (venv, log): a build step after the pip installs
    dirs: list[Path] = field(default_factory=list)  # folders that must exist before it starts (made empty)
    category_env: dict[str, dict[str, str]] = field(default_factory=dict)  # its environment for a --category run


def venv_python(venv: Path) -> Path:
    return venv / "bin" / "python"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def ensure_venv(peer: Peer, log: Path) -> Path:
    """The peer's venv with its packages (installed once; a marker file says it is complete)."""
    venv = PEERS / peer.name
    marker = venv / ".installed"
    wanted = json.dumps([peer.install, peer.install_env, getattr(peer.build, "__name__", None)])
    if marker.exists() and marker.read_text() == wanted:
        return venv
    return install_venv(venv, peer.install, log, peer.install_env, peer.build, wanted)


def clear_venv(venv: Path) -> None:
    """Empty a venv whose marker is missing or differs: an install cut short leaves packages pip then calls
    installed (a console script missing), so it starts again from nothing. A `build` folder is kept: cmake
    resumes its own build where it stopped."""
    if not venv.exists():
        return
    for part in venv.iterdir():
        if part.name == "build":
            continue
        if part.is_dir() and not part.is_symlink():
            shutil.rmtree(part)
        else:
            part.unlink()


def install_venv(venv: Path, install: list[list[str]], log: Path, env: dict[str, str] | None = None,
                 build: Callable[[Path, Path], None] | None = None, wanted: str | None = None) -> Path:
    """A venv with these pip installs (and a build step), done once: a marker records what was installed."""
    marker = venv / ".installed"
    wanted = wanted if wanted is not None else json.dumps(install)
    if marker.exists() and marker.read_text() == wanted:
        return venv
    clear_venv(venv)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    with log.open("a") as out:
        for args in [["install", "-q", "--upgrade", "pip"], *install]:
            subprocess.run([str(venv_python(venv)), "-m", "pip", *args], check=True, stdout=out, stderr=out,
                           env={**os.environ, **(env or {})})
    if build is not None:
        build(venv, log)
    marker.write_text(wanted)
    return venv


def wait_ready(url: str, proc: subprocess.Popen[bytes], timeout: float, api_key: str | None = None) -> None:
    import httpx

    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the server exited with {proc.returncode} before it was ready")
        try:
            if httpx.get(url, timeout=2, headers=headers).status_code < 500:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    raise RuntimeError(f"not ready within {timeout:.0f} s")


class Running:
    """A started server, stopped by its process id (its process group)."""

    def __init__(self, argv: list[str], env: dict[str, str], log: Path) -> None:
        self.out = log.open("ab")
        self.proc = subprocess.Popen(argv, env={**os.environ, **env}, stdout=self.out, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, start_new_session=True)

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(10)
        self.out.close()


def verdicts(results: Path) -> dict[str, str]:
    doc = json.loads(results.read_text())
    return {r["rule"]: r["outcome"] for r in doc["rules"]}


def run_suite(base_url: str, report_dir: Path, extra: list[str]) -> tuple[float, int]:
    """One `conformance run` into report_dir; the reports of an earlier run are removed first, so a run that
    writes none is an error here, never an old verdict read again."""
    if report_dir.exists():
        shutil.rmtree(report_dir / "wire", ignore_errors=True)
        shutil.rmtree(report_dir / "reproducers", ignore_errors=True)
        for name in ("results.json", "junit.xml", "report.md", "report.html"):
            (report_dir / name).unlink(missing_ok=True)
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "conformance", "run", "--base-url", base_url, "--report-dir",
                           str(report_dir), *extra], capture_output=True, text=True, check=False)
    report_dir.mkdir(parents=True, exist_ok=True)
    (report_dir / "run.log").write_text(proc.stdout[-20000:] + proc.stderr[-5000:])
    if not (report_dir / "results.json").exists():
        said = (proc.stderr.strip() or proc.stdout.strip() or f"exit {proc.returncode}").splitlines()[-1]
        raise RuntimeError(f"the suite wrote no results ({said})")
    return time.monotonic() - start, proc.returncode


def model_dir() -> Path:
    """The bundled model, built once per version of its scripts (the folder is named by their fingerprint)."""
    from reference_server.model import build, fingerprint

    path = PEERS / f"model-{fingerprint()}"
    if not (path / "BUILD").exists():
        build(path)
    return path


def serve_and_run(peer: Peer, by_name: dict[str, Peer], report_dir: Path, log: Path,
                  entry: dict[str, object], category: str | None = None) -> tuple[float, int]:
    """Start the peer (and its backend), run the suite once, stop them by their process ids. Each run gets
    fresh processes: work a server goes on with after the suite left (a prefill it does not abandon) must
    not slow the next run down."""
    started: list[Running] = []
    try:
        venv = PEERS / peer.name
        model = peer.prepare(venv, model_dir()) if peer.prepare else model_dir()
        env = dict(peer.env)
        if category is not None:
            env.update(peer.category_env.get(category, {}))
        for folder in peer.dirs:
            folder.mkdir(parents=True, exist_ok=True)
        if peer.backend is not None:  # a proxy: its backend first
            backend = by_name[peer.backend]
            bvenv = ensure_venv(backend, log)
            bport = free_port()
            b = Running(backend.start(bvenv, model_dir(), bport), backend.env, log)
            started.append(b)
            wait_ready(f"http://127.0.0.1:{bport}{backend.base_path}/models", b.proc, backend.ready_timeout)
            env["PEER_BACKEND_URL"] = f"http://127.0.0.1:{bport}{backend.base_path}"
            entry["backend"] = f"{backend.title} " + subprocess.run(
                [str(venv_python(bvenv)), "-c", backend.version], capture_output=True, text=True, check=True
            ).stdout.strip()
        port = free_port()
        server = Running(peer.start(venv, model, port), env, log)
        started.append(server)
        base = f"http://127.0.0.1:{port}{peer.base_path}"
        wait_ready(f"{base}/models", server.proc, peer.ready_timeout, peer.api_key)
        args = [*peer.run_args, *(["--api-key", peer.api_key] if peer.api_key else []),
                *(["--model", str(model)] if peer.model_arg else []), *(["--category", category] if category else [])]
        return run_suite(base, report_dir, args)
    finally:
        for proc in reversed(started):
            proc.stop()


def run_peer(peer: Peer, by_name: dict[str, Peer]) -> dict[str, object]:
    logs = PEERS / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    log = logs / f"{peer.name}.log"
    entry: dict[str, object] = {"name": peer.name, "title": peer.title}
    try:
        venv = ensure_venv(peer, log)
        entry["version"] = installed_version(peer, venv)
        report, second = REPORTS / peer.name, PEERS / "second" / peer.name
        first_s, first_rc = serve_and_run(peer, by_name, report, log, entry)
        second_s, _ = serve_and_run(peer, by_name, second, log, entry)
        a, b = verdicts(report / "results.json"), verdicts(second / "results.json")
        entry.update(wall_s=round(first_s, 1), second_wall_s=round(second_s, 1), exit=first_rc,
                     same_verdicts=a == b, differ={r: [a.get(r), b.get(r)] for r in set(a) | set(b)
                                                   if a.get(r) != b.get(r)},
                     failed=_failed(report / "results.json"), scenario_s=scenario_seconds(report / "results.json"))
        record_fixtures(peer, report, entry)
    except Exception as exc:  # noqa: BLE001 - a peer that cannot be had is reported, not guessed
        entry["error"] = f"{type(exc).__name__}: {exc}"[:500]
    return entry


def scenario_seconds(results: Path) -> dict[str, float]:
    """Each scenario's wall time in the run (its requests, retries and liveness request), slowest first (issue 44:
    the goal is no scenario over 10 s unless the server itself is that slow)."""
    doc = json.loads(results.read_text())
    times = {s["name"]: round(float(s.get("elapsed_s") or 0.0), 2) for s in doc["scenarios"]}
    return dict(sorted(times.items(), key=lambda kv: -kv[1]))


def installed_version(peer: Peer, venv: Path) -> str:
    """The peer's version, as its own venv reports it."""
    return subprocess.run([str(venv_python(venv)), "-c", peer.version], capture_output=True, text=True,
                          check=True).stdout.strip()


def run_category(peer: Peer, by_name: dict[str, Peer], category: str) -> dict[str, object]:
    """One run of one category's scenarios against the peer, its report beside the published one."""
    from peers.record import FIXTURES, record, source

    logs = PEERS / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    log = logs / f"{peer.name}-{category}.log"
    entry: dict[str, object] = {"name": peer.name, "title": peer.title, "category": category}
    report = REPORTS / peer.name / category
    try:
        venv = ensure_venv(peer, log)
        entry["version"] = installed_version(peer, venv)
        wall, rc = serve_and_run(peer, by_name, report, log, entry, category)
        doc = json.loads((report / "results.json").read_text())
        entry.update(wall_s=round(wall, 1), exit=rc, failed=_failed(report / "results.json"),
                     capabilities={k: v["supported"] for k, v in doc["target"]["capabilities"].items()
                                   if k.startswith(category.rstrip("s"))})
        found = record(report, FIXTURES / f"{peer.name}-{category}", source(peer.title, str(entry["version"])))
        entry["fixtures"] = len(found)
    except Exception as exc:  # noqa: BLE001 - a peer that cannot be had is reported, not guessed
        entry["error"] = f"{type(exc).__name__}: {exc}"[:500]
    report.mkdir(parents=True, exist_ok=True)
    (report / "CATEGORY.json").write_text(json.dumps(entry, indent=2) + "\n")
    return entry


def run_reference() -> dict[str, object]:
    """The bundled reference server, twice, as the matrix's first column."""
    from importlib.metadata import version

    entry: dict[str, object] = {"name": "reference", "title": "chat-conformance reference server",
                                "version": version("chat-conformance")}
    walls, found = [], []
    for folder in (REPORTS / "reference", PEERS / "second" / "reference"):
        shutil.rmtree(folder / "wire", ignore_errors=True)
        start = time.monotonic()
        subprocess.run([sys.executable, "-m", "conformance", "run", "--report-dir", str(folder)], capture_output=True,
                       check=False)
        walls.append(round(time.monotonic() - start, 1))
        found.append(verdicts(folder / "results.json"))
    entry.update(wall_s=walls[0], second_wall_s=walls[1], same_verdicts=found[0] == found[1],
                 failed={lvl: [] for lvl in ("must", "should")},
                 scenario_s=scenario_seconds(REPORTS / "reference" / "results.json"))
    (REPORTS / "reference" / "RUNS.json").write_text(json.dumps(entry, indent=2) + "\n")
    return entry


def main(argv: list[str] | None = None) -> int:
    from peers.catalog import CATALOG, UNAVAILABLE

    parser = argparse.ArgumentParser(prog="python peers/run.py", description=__doc__)
    parser.add_argument("--only", action="append", default=[], help="only this peer (repeatable)")
    parser.add_argument("--list", action="store_true", help="list the peers and exit")
    parser.add_argument("--category", help="run only this category's scenarios, once, beside the published reports")
    parser.add_argument("--rejudge", action="store_true",
                        help="start no server: judge both runs' wire logs again with the rules of now, and rewrite "
                             "RUNS.json, the fixtures and the matrix")
    args = parser.parse_args(argv)
    by_name = {p.name: p for p in CATALOG}
    if args.list:
        for p in CATALOG:
            print(f"{p.name:20} {p.title}")
        return 0
    unknown = [n for n in args.only if n not in by_name]
    if unknown:
        parser.error(f"unknown peer(s) {unknown}; --list shows them")
    chosen = [by_name[n] for n in args.only] if args.only else CATALOG
    if args.category:
        for peer in chosen:
            print(f"{peer.name}: installing, starting, running the {args.category} scenarios", flush=True)
            entry = run_category(peer, by_name, args.category)
            print(f"  {json.dumps({k: entry.get(k) for k in ('version', 'wall_s', 'capabilities', 'error')})}",
                  flush=True)
        return 0
    summary_path = REPORTS / "peers.json"
    summary = json.loads(summary_path.read_text()) if summary_path.exists() else {}
    if args.rejudge:
        for peer in chosen:
            if (REPORTS / peer.name / "RUNS.json").exists():
                summary[peer.name] = rejudge(peer)
                print(f"{peer.name}: judged again; same verdicts: {summary[peer.name]['same_verdicts']}", flush=True)
        summary_path.write_text(json.dumps(summary, indent=2, sort_keys=True) + "\n")
        write_matrix(summary)
        return 0
    summary["unavailable"] = UNAVAILABLE
    summary["reference"] = run_reference()
    for peer in chosen:
        print(f"{peer.name}: installing, starting, running the suite twice", flush=True)
        entry = run_peer(peer, by_name)
        summary[peer.name] = entry
        print(f"  {json.dumps({k: entry[k] for k in entry if k in ('version', 'wall_s', 'same_verdicts', 'error')})}",
              flush=True)
        summary_path.write_text(json.dumps(summary, indent=2, sort_keys=True) + "\n")
    write_matrix(summary)
    return 0


def write_matrix(summary: dict[str, object]) -> None:
    """The client libraries replay each server's wire log (`conformance clients`, clients.json beside its report),
    then the matrix of them all, with a "works with" row per client."""
    ran = [REPORTS / n / "results.json" for n in ["reference", *sorted(set(summary) - {"reference", "unavailable"})]
           if (REPORTS / n / "results.json").exists() and "error" not in (summary.get(n) or {})]
    for results in ran:
        subprocess.run([sys.executable, "-m", "conformance", "clients", str(results.parent)], check=False)
        if (results.parent / "responses" / "wire" / "run.json").is_file():  # the --category responses run's streams
            subprocess.run([sys.executable, "-m", "conformance", "clients", str(results.parent / "responses"),
                            "--client", "openai-node-responses"], check=False)
    subprocess.run([sys.executable, "-m", "conformance", "report", "compare", *map(str, ran), "--out", str(REPORTS)],
                   check=True)


def _failed(results: Path) -> dict[str, list[str]]:
    rules = json.loads(results.read_text())["rules"]
    return {lvl: sorted(r["rule"] for r in rules if r["outcome"] == "failed" and r["level"] == lvl)
            for lvl in ("must", "should")}


def rejudge(peer: Peer) -> dict[str, object]:
    """Both runs judged again from their wire logs (`conformance rejudge`), RUNS.json and the fixtures rewritten."""
    report, second = REPORTS / peer.name, PEERS / "second" / peer.name
    for folder in (report, second):
        subprocess.run([sys.executable, "-m", "conformance", "rejudge", str(folder)], capture_output=True, check=False)
    entry = json.loads((report / "RUNS.json").read_text())
    a, b = verdicts(report / "results.json"), verdicts(second / "results.json")
    entry.update(same_verdicts=a == b, differ={r: [a.get(r), b.get(r)] for r in set(a) | set(b) if a.get(r) != b.get(r)},
                 failed=_failed(report / "results.json"))
    record_fixtures(peer, report, entry)
    return entry


def record_fixtures(peer: Peer, report: Path, entry: dict[str, object]) -> None:
    """RUNS.json beside the report, and fixtures/<server>/ from its wire log."""
    (report / "RUNS.json").write_text(json.dumps(entry, indent=2) + "\n")
    from peers.record import FIXTURES, record, source

    record(report, FIXTURES / peer.name, source(peer.title, str(entry["version"])))


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main())
