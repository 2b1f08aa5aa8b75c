"""The README's shell blocks run as written.

The blocks under "For bot authors", "For organisers" and "The living arena" are read out of
README.md (so editing the README without this test fails here) and run line by line as a user
types them in a fresh directory, with the virtualenv's ``bin`` on ``PATH`` as the README says
(``. .venv/bin/activate``):

* ``export K=V`` sets the environment of the lines after it;
* a line ending in ``&`` starts in the background (job ``%1``, ``%2`` ... in order), and the
  next line runs once its ``--port`` accepts connections;
* a server in the foreground (a line with ``--port`` and no ``&``) runs until the test has
  looked at it, then gets Ctrl-C (SIGINT to its process group, as a terminal sends it);
* ``kill %1 %2`` sends SIGTERM to those jobs;
* every other line must exit 0. No line, and no server when stopped, may print a traceback.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
BIN = Path(sys.executable).parent

#: Generous bounds for a loaded machine; a healthy run takes a fraction of them.
START_TIMEOUT_S = 90.0
COMMAND_TIMEOUT_S = 600.0


def readme_block(heading: str) -> list[str]:
    """The command lines of the first ```sh block under ``## heading``, comments removed."""
    text = README.read_text()
    section = text.split(f"\n## {heading}\n", 1)
    assert len(section) == 2, f"README.md has no '## {heading}' section"
    match = re.search(r"```sh\n(.*?)```", section[1].split("\n## ", 1)[0], re.S)
    assert match, f"README.md: no ```sh block under '## {heading}'"
    lines = [re.sub(r"(^|\s)#.*$", "", line).strip() for line in match.group(1).splitlines()]
    return [line for line in lines if line]


def _port_of(command: str) -> int | None:
    found = re.search(r"--port[ =](\d+)", command)
    return int(found.group(1)) if found else None


def _accepts(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


@dataclass
class Job:
    command: str
    proc: subprocess.Popen[str]
    stopped: bool = False

    def output(self) -> str:
        out, err = self.proc.communicate(timeout=60)
        return out + err


@dataclass
class Session:
    """A user's shell session: environment, working directory, background jobs, outputs."""

    cwd: Path
    env: dict[str, str]
    jobs: list[Job] = field(default_factory=list)
    outputs: dict[str, str] = field(default_factory=dict)

    def _popen(self, command: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            ["bash", "-c", command],
            cwd=self.cwd,
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )

    def _wait_listening(self, command: str, proc: subprocess.Popen[str]) -> None:
        port = _port_of(command)
        assert port is not None, f"a server line without --port: {command}"
        deadline = time.monotonic() + START_TIMEOUT_S
        while not _accepts(port):
            if proc.poll() is not None:
                out, err = proc.communicate()
                pytest.fail(f"`{command}` exited with {proc.returncode}:\n{out}{err}")
            assert time.monotonic() < deadline, f"`{command}` is not listening on {port}"
            time.sleep(0.1)

    def _stop(self, job: Job, sig: signal.Signals) -> str:
        if job.proc.poll() is None:
            os.killpg(job.proc.pid, sig)
        output = job.output()
        job.stopped = True
        assert "Traceback" not in output, f"`{job.command}` on {sig.name}:\n{output}"
        # Ctrl-C ends a server cleanly (0); SIGTERM may end it by the signal's default action.
        allowed = {0} if sig is signal.SIGINT else {0, -signal.SIGTERM, 128 + signal.SIGTERM}
        assert job.proc.returncode in allowed, (job.command, job.proc.returncode, output)
        return output

    def run(self, command: str, on_server: Callable[[int], None] | None = None) -> None:
        if command.startswith("export "):
            for assignment in shlex.split(command)[1:]:
                key, _, value = assignment.partition("=")
                self.env[key] = value
            return
        if command.startswith("kill "):
            for spec in command.split()[1:]:
                assert spec.startswith("%"), f"kill takes job numbers here: {command}"
                job = self.jobs[int(spec[1:]) - 1]
                self.outputs[job.command] = self._stop(job, signal.SIGTERM)
            return
        if command.endswith("&"):
            command = command[:-1].strip()
            proc = self._popen(command)
            self.jobs.append(Job(command, proc))
            self._wait_listening(command, proc)
            return
        if _port_of(command) is not None:  # a server in the foreground: look, then Ctrl-C
            proc = self._popen(command)
            job = Job(command, proc)
            try:
                self._wait_listening(command, proc)
                if on_server is not None:
                    port = _port_of(command)
                    assert port is not None
                    on_server(port)
            finally:
                self.outputs[command] = self._stop(job, signal.SIGINT)
            return
        done = subprocess.run(
            ["bash", "-c", command],
            cwd=self.cwd,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=COMMAND_TIMEOUT_S,
            check=False,
        )
        output = done.stdout + done.stderr
        assert "Traceback" not in output, f"`{command}`:\n{output}"
        assert done.returncode == 0, f"`{command}` exited with {done.returncode}:\n{output}"
        self.outputs[command] = output

    def close(self) -> None:
        for job in self.jobs:
            if not job.stopped and job.proc.poll() is None:
                os.killpg(job.proc.pid, signal.SIGKILL)
                job.proc.communicate(timeout=30)


def session(cwd: Path, ports: list[int]) -> Session:
    busy = [p for p in ports if _accepts(p)]
    if busy:
        pytest.fail(f"the README's ports {busy} are in use on this machine: free them first")
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"  # `. .venv/bin/activate`
    env["VIRTUAL_ENV"] = str(BIN.parent)
    env.pop("PYTHONPATH", None)
    return Session(cwd, env)


def _ports(lines: list[str]) -> list[int]:
    return sorted({p for line in lines if (p := _port_of(line)) is not None})


def test_the_bot_authors_block_runs_as_written(tmp_path: Path) -> None:
    lines = readme_block("For bot authors")
    shutil.copytree(ROOT / "examples", tmp_path / "examples")  # a fresh clone's examples/
    shell = session(tmp_path, _ports(lines))
    try:
        for line in lines:
            shell.run(line)
    finally:
        shell.close()
    check = next(out for cmd, out in shell.outputs.items() if " bot check " in f" {cmd} ")
    assert "PASS" in check.upper(), check
    record = json.loads((tmp_path / "record.json").read_text())
    assert record["winner"] in ("a", "b") and record["forfeit"] is None, record["forfeit"]
    assert record["players"] == {"a": "starter-bot", "b": "house-strong"}


def test_the_organisers_block_runs_as_written(tmp_path: Path) -> None:
    lines = readme_block("For organisers")
    assert any(line.startswith("gin-arena bot register ") for line in lines)
    shell = session(tmp_path, _ports(lines))
    seen: dict[str, object] = {}

    def look(port: int) -> None:
        url = f"http://127.0.0.1:{port}/api/v1/tournaments/1"
        with urllib.request.urlopen(url, timeout=30) as response:
            seen["tournament"] = json.load(response)

    try:
        for line in lines:
            shell.run(line, on_server=look)
    finally:
        shell.close()
    assert (tmp_path / "arena.db").exists()  # the embedded default, in the fresh directory
    listing = next(out for cmd, out in shell.outputs.items() if cmd == "gin-arena bot list")
    for name in ("alice", "bob", "carol", "dave"):
        assert re.search(rf"\b{name}\b.*\bactive\b", listing), listing
    status = next(out for cmd, out in shell.outputs.items() if "tournament status" in cmd)
    assert "finished" in status, status
    tournament = seen["tournament"]
    assert isinstance(tournament, dict) and tournament["status"] == "finished", tournament


def test_the_living_arena_block_runs_as_written(tmp_path: Path) -> None:
    lines = readme_block("The living arena")
    shell = session(tmp_path, _ports(lines))
    try:
        for line in lines:
            shell.run(line)
    finally:
        shell.close()
    run = next(out for cmd, out in shell.outputs.items() if cmd == "gin-arena ladder run")
    assert "1 duplicate pair(s)" in run and "played: finished 2" in run, run
    status = next(out for cmd, out in shell.outputs.items() if cmd == "gin-arena ladder status")
    assert re.search(r"\berin\b", status) and re.search(r"\bfrank\b", status), status
    assert "today 2 match(es)" in status, status


def test_make_demo_takes_a_port() -> None:
    done = subprocess.run(
        ["make", "-n", "demo", "PORT=8080"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert re.search(r"gin-arena demo --port 8080\b", done.stdout), done.stdout


def test_make_alone_sets_up_the_venv_the_readme_activates() -> None:
    text = README.read_text()  # the setup block, before the first section
    assert "\nmake                    #" in text and "\n. .venv/bin/activate" in text
    done = subprocess.run(
        ["make", "-n", "-p"], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert re.search(r"^\.DEFAULT_GOAL := venv$", done.stdout, re.M)
    assert (BIN / "activate").exists() and (BIN / "gin-arena").exists()
