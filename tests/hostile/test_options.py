"""What users of testers reach for first (issue 26, item 4), each through `conformance run`: custom headers, exclude
filters, stop at the first failure, waiting for a server to come up, a label and a badge, report formats and paths,
a CA bundle or --insecure for TLS, and HTTP(S)_PROXY / NO_PROXY."""

from __future__ import annotations

import gzip
import json
import os
import select
import socket
import ssl
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from conformance.capabilities import ROUTE_CAPABILITIES
from tests.hostile.servers import HostileServer, answer
from tests.hostile.test_gate import no_done

ALL = [a for s in ("stream-plain", "non-stream", "models") for a in ("--scenario", s)]


def conformance(*argv: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
    return subprocess.run([sys.executable, "-m", "conformance", *argv], capture_output=True, text=True, timeout=300,
                          check=False, env={**clean, **(env or {})})


def test_headers_are_sent_with_every_request_and_masked(tmp_path: Path) -> None:
    with HostileServer(answer) as server:
        proc = conformance("run", "--base-url", server.base_url, "--model", "m", *ALL, "--report-dir", str(tmp_path),
                           "-H", "X-Gateway-Key: gw-secret-4242", "-H", "X-Team: blue")
        seen = list(server.requests)
    assert proc.returncode in (0, 1), proc.stderr
    assert seen and all(r.headers.get("x-gateway-key") == "gw-secret-4242" for r in seen)
    assert all(r.headers.get("x-team") == "blue" for r in seen)
    written = b"".join(p.read_bytes() for p in tmp_path.rglob("*") if p.is_file())
    assert b"gw-secret-4242" not in written and b"gw-secret-4242" not in (proc.stdout + proc.stderr).encode()
    bad = conformance("run", "--base-url", "http://127.0.0.1:9", "-H", "no colon here")
    assert bad.returncode == 2 and "is not a header line" in bad.stderr


def test_exclude_filters(tmp_path: Path) -> None:
    with HostileServer(answer) as server:
        proc = conformance("run", "--base-url", server.base_url, "--model", "m", "--category", "models",
                           "--exclude-scenario", "health", "--exclude-rule", "MOD-004", "--report-dir", str(tmp_path))
        everything = conformance("run", "--base-url", server.base_url, "--category", "models",
                                 "--exclude-category", "models")
    assert proc.returncode in (0, 1), proc.stderr
    doc = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    assert "health" not in {s["name"] for s in doc["scenarios"]} and "models" in {s["name"] for s in doc["scenarios"]}
    assert "MOD-004" not in {r["rule"] for r in doc["rules"]} and "MOD-001" in {r["rule"] for r in doc["rules"]}
    assert everything.returncode == 2 and "the exclusions leave no rule to judge" in everything.stderr


def test_exitfirst_stops_at_the_first_gating_failure(tmp_path: Path) -> None:
    with HostileServer(no_done) as server:
        proc = conformance("run", "--base-url", server.base_url, "--model", "m", "-x", "--workers", "1",
                           "--report-dir", str(tmp_path))
    assert proc.returncode == 1, proc.stderr
    assert "INCOMPLETE: stopped at the first failure (-x): SSE-002 [must] in stream-plain" in proc.stdout, proc.stdout
    doc = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    sent = [s for s in doc["scenarios"] if not s.get("not_sent")]  # (the routes the server lacks are listed unsent)
    # the route probes go first, together (one per protocol); then the run stops
    assert len(sent) <= len(ROUTE_CAPABILITIES) and len(doc["incomplete"]["not_run"]) > 40


def test_wait_for_a_server_that_is_starting(tmp_path: Path) -> None:
    with socket.socket() as holder:  # a free port nobody listens on yet
        holder.bind(("127.0.0.1", 0))
        port = holder.getsockname()[1]
    late: list[HostileServer] = []

    def start_late() -> None:
        time.sleep(1.5)
        late.append(HostileServer(answer, port=port))

    url = f"http://127.0.0.1:{port}"
    assert conformance("run", "--base-url", url, "--model", "m", "--scenario", "stream-plain").returncode == 3
    threading.Thread(target=start_late, daemon=True).start()
    try:
        proc = conformance("run", "--base-url", url, "--model", "m", "--scenario", "stream-plain", "--wait", "20",
                           "--report-dir", str(tmp_path))
    finally:
        for server in late:
            server.close()
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    assert f"waiting for {url} to answer (up to 20 s)" in proc.stdout


def test_label_badge_and_report_paths(tmp_path: Path) -> None:
    junit = tmp_path / "elsewhere" / "tests.xml"
    with HostileServer(answer) as server:
        proc = conformance("run", "--base-url", server.base_url, "--model", "m", "--scenario", "stream-plain",
                           "--label", "my-server 1.2", "--report-format", "json,md", "--junit-xml", str(junit),
                           "--report-dir", str(tmp_path / "out"))
    assert proc.returncode in (0, 1), proc.stderr
    names = sorted(p.name for p in (tmp_path / "out").iterdir() if p.is_file())
    assert names == ["badge.svg", "report.md", "results.json"] and junit.is_file()
    doc = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    assert doc["target"]["label"] == "my-server 1.2"
    badge = (tmp_path / "out" / "badge.svg").read_text(encoding="utf-8")
    assert badge.startswith("<svg") and "my-server 1.2" in badge and ("PASS" in badge or "FAIL" in badge)
    matrix = conformance("report", "compare", str(tmp_path / "out" / "results.json"), "--out", str(tmp_path / "m"))
    assert matrix.returncode == 0 and "my-server 1.2" in (tmp_path / "m" / "matrix.md").read_text(encoding="utf-8")
    bad = conformance("run", "--base-url", "http://127.0.0.1:9", "--report-format", "pdf")
    assert bad.returncode == 2 and "unknown report format 'pdf'" in bad.stderr


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
                   check=True, capture_output=True, timeout=60)
    return cert, key


def test_tls_with_a_ca_bundle_or_insecure(certificate: tuple[Path, Path], tmp_path: Path) -> None:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(*certificate)
    with HostileServer(answer, tls=context) as server:
        url = server.base_url.replace("http://", "https://")
        refused = conformance("run", "--base-url", url, "--model", "m", "--scenario", "stream-plain")
        bundled = conformance("run", "--base-url", url, "--model", "m", "--scenario", "stream-plain",
                              "--ca-bundle", str(certificate[0]), "--report-dir", str(tmp_path / "a"))
        insecure = conformance("run", "--base-url", url, "--model", "m", "--scenario", "stream-plain", "--insecure",
                               "--report-dir", str(tmp_path / "b"))
    assert refused.returncode == 3 and "CERTIFICATE_VERIFY_FAILED" in refused.stderr, refused.stderr
    assert bundled.returncode in (0, 1) and (tmp_path / "a" / "results.json").is_file(), bundled.stderr
    assert insecure.returncode in (0, 1) and (tmp_path / "b" / "results.json").is_file(), insecure.stderr


class Proxy:
    """A forward proxy on 127.0.0.1: absolute-form requests relayed to their origin, CONNECT tunnels opened."""

    def __init__(self) -> None:
        self.seen: list[str] = []
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(32)
        self.listener.settimeout(0.2)
        self.stopping = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.listener.getsockname()[1]}"

    def _accept(self) -> None:
        while not self.stopping.is_set():
            try:
                conn, _ = self.listener.accept()
            except OSError:
                continue
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            conn.settimeout(10)
            head = b""
            while b"\r\n\r\n" not in head:
                piece = conn.recv(65536)
                if not piece:
                    return
                head += piece
            line, _, rest = head.partition(b"\r\n")
            method, target, version = line.decode("latin-1").split(" ", 2)
            self.seen.append(f"{method} {target}")
            if method == "CONNECT":
                host, port = target.rsplit(":", 1)
                upstream = socket.create_connection((host, int(port)), timeout=10)
                conn.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
                leftover = rest.partition(b"\r\n\r\n")[2]
            else:
                origin, path = target.removeprefix("http://").split("/", 1)
                host, port = origin.rsplit(":", 1)
                upstream = socket.create_connection((host, int(port)), timeout=10)
                leftover = f"{method} /{path} {version}\r\n".encode("latin-1") + rest
            with upstream:
                if leftover:
                    upstream.sendall(leftover)
                self._relay(conn, upstream)

    @staticmethod
    def _relay(a: socket.socket, b: socket.socket) -> None:
        end = time.monotonic() + 30
        while time.monotonic() < end:
            ready, _, _ = select.select([a, b], [], [], 0.5)
            for sock in ready:
                data = sock.recv(65536)
                if not data:
                    return
                (b if sock is a else a).sendall(data)

    def close(self) -> None:
        self.stopping.set()
        self.listener.close()


def test_proxies_from_the_environment(certificate: tuple[Path, Path], tmp_path: Path) -> None:
    proxy = Proxy()
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(*certificate)
    try:
        with HostileServer(answer) as plain, HostileServer(answer, tls=context) as secure:
            through = conformance("run", "--base-url", plain.base_url, "--model", "m", "--scenario", "stream-plain",
                                  "--report-dir", str(tmp_path / "a"), env={"HTTP_PROXY": proxy.url})
            tunnelled = conformance("run", "--base-url", secure.base_url.replace("http://", "https://"), "--model",
                                    "m", "--scenario", "stream-plain", "--ca-bundle", str(certificate[0]),
                                    "--report-dir", str(tmp_path / "b"), env={"https_proxy": proxy.url})
            seen = len(proxy.seen)
            bypassed = conformance("run", "--base-url", plain.base_url, "--model", "m", "--scenario", "stream-plain",
                                   "--report-dir", str(tmp_path / "c"),
                                   env={"HTTP_PROXY": proxy.url, "NO_PROXY": "127.0.0.1"})
    finally:
        proxy.close()
    assert through.returncode in (0, 1) and tunnelled.returncode in (0, 1), through.stderr + tunnelled.stderr
    assert any(s.startswith("POST http://127.0.0.1:") for s in proxy.seen[:seen])
    assert any(s.startswith("CONNECT 127.0.0.1:") for s in proxy.seen[:seen])
    assert bypassed.returncode in (0, 1) and len(proxy.seen) == seen  # NO_PROXY: straight to the server


def test_click_usage_errors_are_one_line() -> None:
    proc = conformance("replay", "--port", "70000")
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "70000 is not in the range" in proc.stderr
    assert proc.stderr.startswith("conformance: ")


def test_the_wire_log_is_also_har(tmp_path: Path) -> None:
    with HostileServer(answer) as server:
        proc = conformance("run", "--base-url", server.base_url, "--model", "m", *ALL, "--api-key", "sk-har-secret-99",
                           "--scenario", "error-oversized", "--report-dir", str(tmp_path))
        origin = server.base_url
    assert proc.returncode in (0, 1), proc.stderr
    har = json.loads((tmp_path / "wire" / "wire.har").read_text(encoding="utf-8"))["log"]
    bodies = sorted((tmp_path / "wire").glob("*.body"))
    assert har["version"] == "1.2" and len(har["entries"]) == len(bodies)
    for entry in har["entries"]:
        exact = (tmp_path / "wire" / entry["response"]["content"]["_bodyFile"]).read_bytes()
        assert entry["response"]["content"]["text"].encode("utf-8") == exact and entry["request"]["url"].startswith(
            origin)
    assert "sk-har-secret-99" not in (tmp_path / "wire" / "wire.har").read_text(encoding="utf-8")
    assert any(h["value"] == "Bearer <redacted>" for h in har["entries"][0]["request"]["headers"])
    # a request up to 256 KiB inline; the oversized one (16 MiB) recorded naming its bulk, the exact bytes sent named
    # by their file (the reproducer's)
    posted = [entry["request"]["postData"] for entry in har["entries"] if "postData" in entry["request"]]
    referenced = [p for p in posted if "_requestFile" in p]
    assert len(referenced) == 1 and all("text" in p and len(p["text"]) <= 256 * 1024 for p in posted)
    sent = gzip.decompress((tmp_path / "wire" / referenced[0]["_requestFile"]).read_bytes())
    assert len(sent) > 16 * 1024 * 1024 and f"{len(sent):,}-byte request" in referenced[0]["comment"]
    assert json.loads(sent)["user"] == "x" * 16 * 1024 * 1024
