"""Helpers for tests that run `gin-arena` as the operator does: commands, Celery workers, bots.

Every process started here is killed by its owner's teardown; every wait polls with a generous
deadline and, on failure, shows what the processes printed.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from arena.bots.house import start_house_bots
from arena.bots.sdk import BotServer


def gin_arena_argv() -> list[str]:
    """The `gin-arena` console script of this environment."""
    script = Path(sys.executable).with_name("gin-arena")
    return [str(script)] if script.exists() else [sys.executable, "-m", "arena.cli"]


def gin_arena(
    *args: str, env: Mapping[str, str], timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*gin_arena_argv(), *args],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def wait_until(
    predicate: Callable[[], Any], *, timeout: float, what: str, explain: Callable[[], str] = str
) -> Any:
    """Poll until ``predicate()`` is truthy; fail naming ``what`` (and ``explain()``)."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}\n{explain()}")
        time.sleep(0.05)


class Worker:
    """A `gin-arena worker` subprocess with its output in a log file."""

    def __init__(
        self,
        name: str,
        env: Mapping[str, str],
        log_dir: Path,
        concurrency: int,
        options: Sequence[str] = (),
    ) -> None:
        self.name = name
        self.log_path = log_dir / f"{name}.log"
        self._log: IO[bytes] = self.log_path.open("wb")
        argv = [
            *gin_arena_argv(),
            "worker",
            "--concurrency",
            str(concurrency),
            "--hostname",
            f"{name}@%h",
            "--loglevel",
            "INFO",
            *options,
        ]
        self.proc = subprocess.Popen(
            argv,
            env={**os.environ, **env},
            stdout=self._log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )

    @property
    def pid(self) -> int:
        return self.proc.pid

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def is_ready(self) -> bool:
        if self.proc.poll() is not None:
            raise AssertionError(
                f"worker {self.name} exited with {self.proc.returncode}:\n" + self.log()
            )
        return any(
            f"{self.name}@" in line and " ready." in line for line in self.log().splitlines()
        )

    def kill(self) -> None:
        """SIGKILL: no warm shutdown, no acknowledgement, nothing cleaned up."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=30)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)  # warm shutdown: finish running tasks
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=30)
        self._log.close()


class Workers:
    """Starts workers on demand; :meth:`close` stops every one (fixture teardown)."""

    def __init__(self, env: Mapping[str, str], log_dir: Path) -> None:
        self.env = dict(env)
        self.log_dir = log_dir
        self.started: list[Worker] = []

    def start(
        self, *names: str, concurrency: int = 2, timeout: float = 90, options: Sequence[str] = ()
    ) -> list[Worker]:
        """Workers ``names`` (``options``: more of ``gin-arena worker``'s), once each is ready."""
        new = [Worker(n, self.env, self.log_dir, concurrency, options) for n in names]
        self.started += new
        for w in new:
            wait_until(
                w.is_ready, timeout=timeout, what=f"worker {w.name} to be ready", explain=self.logs
            )
        return new

    def logs(self) -> str:
        return "\n".join(f"--- {w.name} (pid {w.pid}) ---\n{w.log()[-6000:]}" for w in self.started)

    def close(self) -> None:
        for w in self.started:
            w.stop()


def slow_down(server: BotServer, delay_s: float) -> BotServer:
    """Make a bot think ``delay_s`` per action (so a match lasts long enough to be killed)."""
    inner = server.act

    def act(request: Any) -> Any:
        time.sleep(delay_s)
        return inner(request)

    server.act = act
    return server


@contextmanager
def house_bots(kinds: Sequence[str], *, delay_s: float = 0.0) -> Iterator[list[BotServer]]:
    servers = start_house_bots(kinds)
    try:
        yield [slow_down(s, delay_s) if delay_s else s for s in servers]
    finally:
        for s in servers:
            s.stop()


BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def run_quick_benchmark(
    script: str, json_out: Path, *args: str, timeout: float = 300
) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    """Run ``benchmarks/<script> --quick --json <json_out> <args>``; fail with its output if
    it fails, else return the finished process and the figures it wrote."""
    argv = [sys.executable, str(BENCHMARKS / script), "--quick", "--json", str(json_out), *args]
    # Its own process group, and on a timeout Ctrl-C first: the benchmark's ``finally`` stops
    # the workers and servers it started. A bare SIGKILL left them running, and a leftover
    # worker on this test's Redis database took later tests' tasks.
    proc = subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGINT)
        try:
            stdout, stderr = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            stdout, stderr = proc.communicate()
        raise AssertionError(f"{script} --quick ran past {timeout} s\n{stdout}{stderr}") from None
    done = subprocess.CompletedProcess(argv, proc.returncode, stdout, stderr)
    assert done.returncode == 0, done.stdout + done.stderr
    figures: dict[str, Any] = json.loads(json_out.read_text())
    return done, figures
