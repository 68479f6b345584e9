"""The generation engine: one model, one generation at a time in one worker thread, a bounded queue.

A job's tokens go to its asyncio queue as they are made. The worker checks the job's stop flag
between tokens, so a disconnect or a cancel stops the work within one token and frees the slot.

``Pace`` makes it behave like a slower server for the benchmarks (benchmarks/slow_server.py): a
number of slots generating at once, a prefill delay before the first token and a token rate. The
model itself stays the bundled one; its steps run one at a time under a lock, and the delays are
waits on the job's stop flag, so a disconnect still frees a slot at once.
"""

from __future__ import annotations

import asyncio
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DEFAULT_CONTEXT = 65536  # tokens: an agent's prompt (Claude Code's is about 47K of this tokenizer's) fits
MODEL_ID = "chat-conformance/bigram-ref"


@dataclass
class Job:
    """One generation: its prompt and settings, its stop flag, and where its output goes."""

    prompt: list[int]
    max_tokens: int
    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = 0
    seed: int | None = None
    processors: list[Callable[..., Any]] = field(default_factory=list)
    loop: asyncio.AbstractEventLoop | None = None
    events: asyncio.Queue[tuple[str, Any]] | None = None
    stop_flag: threading.Event = field(default_factory=threading.Event)
    stop_reason: str = ""  # disconnect | cancelled | stop (a stop sequence)
    stop_sequence: str | None = None  # the stop sequence that ended the output (the Messages API names it)
    request_id: str = ""
    cached: int = 0  # prompt tokens whose KV the engine reused (seed 001 prompt reuse), set before the first token
    ignore: set[str] = field(default_factory=set)  # stop reasons a faulty server ignores (self-test only)
    logprobs: int | None = None  # the Completions API's logprobs: each token's own and its top alternatives ("token")

    def emit(self, kind: str, value: Any) -> None:
        """Hand one event to the request's event loop; dropped if the request is already gone."""
        if self.loop is None or self.events is None or self.loop.is_closed():
            return
        try:
            self.loop.call_soon_threadsafe(self.events.put_nowait, (kind, value))
        except RuntimeError:  # the loop closed between the check and the call
            pass

    def stop(self, reason: str) -> None:
        if reason in self.ignore:
            return
        if not self.stop_flag.is_set():
            self.stop_reason = reason
            self.stop_flag.set()


@dataclass(frozen=True)
class Pace:
    """How fast the engine pretends to be: ``slots`` generations at once, ``prefill_s`` before each first
    token, ``token_rate`` tokens a second (None: as fast as the model goes)."""

    slots: int = 1
    prefill_s: float = 0.0
    token_rate: float | None = None


class QueueFull(Exception):
    """More requests than one generation plus the queue limit."""


class Engine:
    """Loads the model before the server opens its port; runs jobs one at a time."""

    def __init__(self, model_dir: Path, max_context: int = DEFAULT_CONTEXT, queue_limit: int = 4,
                 model_id: str | None = None, faults: dict[str, Any] | None = None, pace: Pace | None = None,
                 prompt_reuse: bool = True) -> None:
        self.pace = pace or Pace()
        # seed 001 "Prompt reuse": one retained prefix; a request that continues it exactly reuses its KV cache
        self.prompt_reuse = prompt_reuse and self.pace.slots == 1
        self.cache: Any = None
        self.cache_tokens: list[int] = []
        self.model_lock = threading.Lock()  # one model step at a time, whichever slot takes it
        self.faults = faults or {}  # engine misbehaviour for the self-test only (reference_server.faults)
        self.model_dir = model_dir
        self.model_id = model_id or (MODEL_ID if (model_dir / "BUILD").exists() else str(model_dir))
        # the bundled bigram machine (reference_server.model): its attention and MLP add nothing, so each position's
        # logits are its own token's, and a prompt's answer is its last token's. Its prefill feeds that token alone:
        # the same tokens come out, and an agent's 47K-token prompt costs what "Hi" does (issue 58)
        self.last_token_only = (model_dir / "BUILD").exists()
        self.max_context = max_context
        self.queue_limit = queue_limit
        self.jobs: queue.Queue[Job] = queue.Queue()
        self.lock = threading.Lock()
        self.admitted = 0
        self.counters = {"running": 0, "queued": 0, "completed": 0, "cancelled": 0, "failed": 0, "tokens": 0}
        self.active: dict[str, Job] = {}
        self.ready = threading.Event()
        self.load_error: BaseException | None = None
        self.model: Any = None
        self.tokenizer: Any = None
        self.grammars: Any = None
        self.max_token_bytes = 64
        self.thread = threading.Thread(target=self._worker, name="generation", daemon=True)

    def start(self) -> None:
        """Start the worker and wait until it has loaded the model."""
        self.thread.start()
        self.ready.wait()
        if self.load_error is not None:
            raise RuntimeError(f"the model did not load: {self.load_error}") from self.load_error

    def admit(self) -> None:
        """Take a place (one generating per slot plus ``queue_limit`` waiting) or raise ``QueueFull``."""
        with self.lock:
            if self.admitted >= self.pace.slots + self.queue_limit:
                raise QueueFull
            self.admitted += 1

    def release(self) -> None:
        with self.lock:
            self.admitted -= 1

    def submit(self, job: Job) -> None:
        job.ignore = {"disconnect"} if self.faults.get("ignore_disconnect") else set()
        with self.lock:
            self.counters["queued"] += 1
            if job.request_id:
                self.active[job.request_id] = job
        self.jobs.put(job)

    def forget(self, job: Job) -> None:
        with self.lock:
            if job.request_id and self.active.get(job.request_id) is job:
                del self.active[job.request_id]

    def cancel(self, request_id: str) -> bool:
        with self.lock:
            job = self.active.get(request_id)
        if job is None or job.stop_flag.is_set():
            return False
        if not self.faults.get("ignore_cancel"):
            job.stop("cancelled")
        return True

    def health(self) -> dict[str, Any]:
        with self.lock:
            counters = dict(self.counters)
            admitted = self.admitted
        return {"running": counters["running"], "queued": counters["queued"], "completed": counters["completed"],
                "cancelled": counters["cancelled"], "failed": counters["failed"], "tokens": counters["tokens"],
                "admitted": admitted}

    def _worker(self) -> None:
        try:
            from mlx_lm import load

            from reference_server.grammar import Grammars

            loaded = load(str(self.model_dir))
            self.model, self.tokenizer = loaded[0], loaded[1]
            self.max_token_bytes = max(len(t.encode("utf-8")) for t in self.tokenizer.get_vocab()) + 4
            self.grammars = Grammars(self.tokenizer)
        except BaseException as exc:  # noqa: BLE001 - reported by start()
            self.load_error = exc
            self.ready.set()
            return
        self.ready.set()
        for n in range(1, self.pace.slots):
            threading.Thread(target=self._serve, name=f"generation-{n}", daemon=True).start()
        self._serve()

    def _serve(self) -> None:
        while True:
            job = self.jobs.get()
            with self.lock:
                self.counters["queued"] -= 1
                self.counters["running"] += 1
            outcome = "completed"
            try:
                outcome = self._generate(job)
            except Exception as exc:  # noqa: BLE001 - a generation failure after the headers
                outcome = "failed"
                job.emit("error", f"generation failed: {type(exc).__name__}: {exc}")
            finally:
                with self.lock:
                    self.counters["running"] -= 1
                    self.counters[outcome] += 1

    def _common(self, prompt: list[int]) -> int:
        """How many of the prompt's first tokens the retained prefix holds (at least one token is left to feed, to
        have logits)."""
        common = 0
        for old, new in zip(self.cache_tokens, prompt, strict=False):
            if old != new:
                break
            common += 1
        return min(common, len(prompt) - 1)

    def _reuse(self, job: Job) -> tuple[list[int], Any]:
        """The prompt tokens to feed and the KV cache to feed them into (None: no reuse for this job).

        Reuse is for plain generations on one slot: a logits processor (a grammar, a repetition
        penalty) reads the tokens fed, which would then be only the new suffix. The bundled model is fed its
        prompt's last token alone (``last_token_only``): a grammar is told the prompt it is fed is that token.
        """
        # (a repetition penalty reads the prompt's last tokens: such a job is fed its whole prompt)
        if self.last_token_only and all(hasattr(p, "prompt_len") for p in job.processors):
            for processor in job.processors:  # a grammar skips the prompt it is fed: now one token
                if hasattr(processor, "prompt_len"):
                    processor.prompt_len = 1
            if self.prompt_reuse:  # what a real KV cache would hold of this prompt: reported as cached tokens
                job.cached = self._common(job.prompt)
            return job.prompt[-1:], None
        if not self.prompt_reuse or job.processors:
            return job.prompt, None
        from mlx_lm.models.cache import can_trim_prompt_cache, make_prompt_cache, trim_prompt_cache

        common = self._common(job.prompt)
        if self.cache is not None and common > 0 and can_trim_prompt_cache(self.cache):
            trim_prompt_cache(self.cache, len(self.cache_tokens) - common)
        else:
            self.cache, common = make_prompt_cache(self.model), 0
        self.cache_tokens = job.prompt[:common]
        job.cached = common
        return job.prompt[common:], self.cache

    @staticmethod
    def _logprobs(step: Any, top: int) -> tuple[float, list[tuple[int, float]]]:
        """A step's token's log probability, and the ``top`` most likely tokens with theirs."""
        import mlx.core as mx

        lp = step.logprobs
        chosen = float(lp[step.token])
        if top <= 0:
            return chosen, []
        k = min(top, lp.shape[-1])
        best: list[int] = list(mx.argpartition(-lp, kth=k - 1)[:k].tolist())  # type: ignore[arg-type]
        return chosen, sorted(((int(i), float(lp[i])) for i in best), key=lambda t: -t[1])

    def score(self, tokens: list[int], top: int) -> list[tuple[float | None, list[tuple[int, float]]]]:
        """Each prompt token's log probability given the ones before it (None for the first) and the ``top`` most
        likely tokens at its place: what ``echo`` with ``logprobs`` returns for a prompt. One forward pass, under the
        model's lock (the worker's generations take turns with it)."""
        import mlx.core as mx

        with self.model_lock:
            logits = self.model(mx.array(tokens)[None])[0]
            lp = logits - mx.logsumexp(logits, axis=-1, keepdims=True)
            mx.eval(lp)
        out: list[tuple[float | None, list[tuple[int, float]]]] = [(None, [])]
        for at in range(1, len(tokens)):
            row = lp[at - 1]
            best: list[tuple[int, float]] = []
            if top > 0:
                k = min(top, row.shape[-1])
                ids: list[int] = list(mx.argpartition(-row, kth=k - 1)[:k].tolist())  # type: ignore[arg-type]
                best = sorted(((int(i), float(row[i])) for i in ids), key=lambda t: -t[1])
            out.append((float(row[tokens[at]]), best))
        return out

    def _generate(self, job: Job) -> str:
        import mlx.core as mx
        from mlx_lm import stream_generate
        from mlx_lm.sample_utils import make_sampler

        if job.stop_flag.is_set():
            job.emit("done", (job.stop_reason, 0))
            return "cancelled"
        mx.random.seed(job.seed if job.seed is not None else time.time_ns() % (2**32))
        sampler = make_sampler(temp=job.temperature, top_p=job.top_p if job.top_p < 1 else 0.0, top_k=job.top_k)
        count, finish = 0, "stop"
        pace = self.pace
        if pace.prefill_s and job.stop_flag.wait(pace.prefill_s):
            job.emit("done", (job.stop_reason, 0))
            return "cancelled"
        prompt, cache = self._reuse(job)
        steps = stream_generate(self.model, self.tokenizer, prompt, max_tokens=job.max_tokens, sampler=sampler,
                                logits_processors=job.processors or None, prompt_cache=cache)
        made: list[int] = []
        try:
            while True:
                with self.model_lock:
                    step = next(steps, None)
                if step is None:
                    break
                made.append(int(step.token))
                if pace.token_rate:
                    job.stop_flag.wait(1.0 / pace.token_rate)
                if job.stop_flag.is_set():
                    finish = job.stop_reason
                    break
                count = step.generation_tokens
                with self.lock:
                    self.counters["tokens"] += 1  # every token made, also those a client never read
                if job.logprobs is not None:
                    job.emit("token", (int(step.token), step.text, *self._logprobs(step, job.logprobs)))
                elif step.text:
                    job.emit("text", step.text)
                if step.finish_reason is not None:
                    finish = step.finish_reason
        except BaseException:
            self.cache, self.cache_tokens = None, []
            raise
        if cache is None and self.last_token_only and self.prompt_reuse and len(prompt) == 1:
            self.cache_tokens = job.prompt + made  # (the prefix a real cache would hold now)
        elif cache is not None:  # what the cache holds now: the prompt and the tokens fed back
            held, seen = cache[0].offset, job.prompt + made
            if held <= len(seen):
                self.cache_tokens = seen[:held]
            else:  # a token fed that we did not see: start afresh next time
                self.cache, self.cache_tokens = None, []
        job.emit("done", (finish, count))
        return "cancelled" if finish in ("disconnect", "cancelled") else "completed"
