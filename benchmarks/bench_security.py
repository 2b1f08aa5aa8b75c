"""The security suites in one command, with their figures: the SSRF table at every entry point,
the authorisation matrix, the credential scan of every read, and a big schemathesis run.

It runs the suite's own tests (one table, one matrix: nothing is written twice) in a pytest
child process, with ``ARENA_SECURITY_FIGURES`` naming a file where they append their counts,
and ``ARENA_SCHEMATHESIS_EXAMPLES`` raising the examples per operation:

* ``tests/security/test_ssrf_entry_points.py``: the SSRF table (``tests/security/
  ssrf_table.py``) at registration, URL update, webhook endpoint, and at connect time in the
  match player and the webhook sender; rebinding after registration; redirects. Reported: the
  table's size, the refusals per entry point, connections seen (by the sentinel listener and
  by the audit hook) and name lookups (all must be 0).
* ``tests/api/test_api_authorization.py``: every write of the spec by anonymous, owner, other
  owner and organiser (SQLite and PostgreSQL), and every GET of the spec as each role scanned
  for bot secrets, owner tokens, the organiser token and webhook secrets.
* ``tests/api/test_api_schemathesis.py``: every operation of the spec as anonymous, owner and
  organiser, valid and (owner, organiser) invalid input; requests generated and 5xx answers.

    .venv/bin/python benchmarks/bench_security.py          # full run, writes results/security.json
    .venv/bin/python benchmarks/bench_security.py --quick  # a smoke test, writes nothing

``--examples N`` sets schemathesis' examples per operation (default 60; quick 1). The quick
run takes the SSRF entry points (redirects aside), the matrix's coverage of the spec, the
credential scan on SQLite and schemathesis on the anonymous reads (:data:`QUICK`).
Needs this machine's PostgreSQL (the matrix runs on both databases) unless ``--quick``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path
from typing import Any

import yaml
from run_info import run_header

ROOT = Path(__file__).resolve().parent.parent
RESULTS = Path(__file__).parent / "results" / "security.json"
#: The quick run's tests: the SSRF table at each entry point, the matrix's coverage of the
#: spec and the credential scan on SQLite, and schemathesis on the anonymous reads.
QUICK = (
    "(test_ssrf_entry_points and not redirects and not url_guard)"
    " or matrix_has_every_write or (credential and sqlite) or (anonymous-positive-GET)"
)
SUITES = {
    "ssrf": "tests/security/test_ssrf_entry_points.py",
    "authorisation": "tests/api/test_api_authorization.py",
    "schemathesis": "tests/api/test_api_schemathesis.py",
}


def run_suites(examples: int, quick: bool, figures_path: Path, junit: Path) -> dict[str, Any]:
    """The pytest run: its exit status, seconds and the test outcomes by suite."""
    argv = [
        sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
        "-o", "addopts=", f"--junitxml={junit}", *SUITES.values(),
    ]  # fmt: skip
    if quick:
        argv += ["-k", QUICK]
    env = {
        **os.environ,
        "ARENA_SECURITY_FIGURES": str(figures_path),
        "ARENA_SCHEMATHESIS_EXAMPLES": str(examples),
    }
    began = time.perf_counter()
    done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - began
    if done.returncode not in (0, 1):
        raise SystemExit(f"pytest could not run the suites:\n{done.stdout}\n{done.stderr}")
    outcomes: dict[str, Counter[str]] = {name: Counter() for name in SUITES}
    failures: list[str] = []
    for case in ET.parse(junit).getroot().iter("testcase"):
        suite = next((n for n, f in SUITES.items() if case.get("classname", "").endswith(
            Path(f).stem)), None)  # fmt: skip
        if suite is None:
            continue
        name = case.get("name", "")
        failed = case.find("failure") is not None or case.find("error") is not None
        skipped = case.find("skipped") is not None
        state = "failed" if failed else "skipped" if skipped else "passed"
        outcomes[suite][state] += 1
        if name.startswith("test_authorisation_matrix"):
            outcomes["authorisation"][f"matrix_{state}"] += 1
        if state == "failed":
            failures.append(f"{suite}: {name}")
    return {
        "exit_status": done.returncode,
        "seconds": round(seconds, 1),
        "tests": {name: dict(sorted(c.items())) for name, c in outcomes.items()},
        "failures": failures[:20],
        "summary": done.stdout.strip().splitlines()[-1] if done.stdout.strip() else "",
    }


def collect(figures_path: Path) -> dict[str, Any]:
    """The counts the tests appended."""
    ssrf: list[dict[str, Any]] = []
    secrets: list[dict[str, Any]] = []
    st_rows: list[dict[str, Any]] = []
    if figures_path.exists():
        for line in figures_path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            ssrf += [row["ssrf"]] if "ssrf" in row else []
            secrets += [row["secrets"]] if "secrets" in row else []
            st_rows += [row["schemathesis"]] if "schemathesis" in row else []
    return {
        "ssrf": {
            "entry_points": {r["entry_point"]: r for r in ssrf},
            "checks": sum(r["cases"] for r in ssrf),
            "refused": sum(r["refused"] for r in ssrf),
            "connections_seen": sum(r["connections"] + r["sentinel_connections"] for r in ssrf),
            "lookups_seen": sum(r["lookups"] for r in ssrf),
        },
        "secrets": {
            "reads_scanned": sum(r["reads"] for r in secrets),
            "leaks": sum(r["leaks"] for r in secrets),
            "runs": len(secrets),
        },
        "schemathesis": {
            "operations_by_role": len(st_rows),
            "requests": sum(r["requests"] for r in st_rows),
            "5xx": sum(r["5xx"] for r in st_rows),
            "429": sum(r["429"] for r in st_rows),
        },
    }


def format_report(results: dict[str, Any]) -> str:
    ssrf, secrets, st = results["ssrf"], results["secrets"], results["schemathesis"]
    tests = results["run"]["tests"]
    lines = [
        f"security suites (load {results['load_before']}, {results['run']['seconds']} s):",
        f"  SSRF table               {results['ssrf_table_size']:>7} URLs"
        f" ({len(ssrf['entry_points'])} entry points)",
    ]
    for name, row in ssrf["entry_points"].items():
        lines.append(
            f"    {name:<32} refused {row['refused']}/{row['cases']},"
            f" connections {row['connections'] + row['sentinel_connections']},"
            f" lookups {row['lookups']}"
        )
    lines += [
        f"  SSRF refused             {ssrf['refused']:>7} of {ssrf['checks']}",
        f"  connections seen         {ssrf['connections_seen']:>7}",
        f"  authorisation matrix     {tests['authorisation'].get('matrix_passed', 0):>7} cases"
        f" passed, {tests['authorisation'].get('matrix_failed', 0)} failed"
        f" ({results['spec_writes']} writes x 4 roles x databases)",
        f"  reads scanned            {secrets['reads_scanned']:>7} ({secrets['leaks']} leaks)",
        f"  schemathesis requests    {st['requests']:>7} ({st['operations_by_role']} operation"
        f" runs, {results['examples']} examples each)",
        f"  schemathesis 5xx         {st['5xx']:>7}",
        f"  tests                    {results['run']['summary']}",
    ]
    lines += [f"  FAILED {f}" for f in results["run"]["failures"]]
    return "\n".join(lines)


def _spec_writes() -> int:
    spec = yaml.safe_load((ROOT / "api_spec" / "openapi.yaml").read_text(encoding="utf-8"))
    return sum(
        1
        for item in spec["paths"].values()
        for m in item
        if m in ("post", "put", "patch", "delete")
    )


def _table_size() -> int:
    """The SSRF table's size, counted in a child (the table lives with the tests)."""
    code = "import ssrf_table; print(len(ssrf_table.SSRF_CASES))"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "tests" / "security")}
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    return int(done.stdout)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--quick", action="store_true", help="a smoke test (SQLite only, 1 example); writes no JSON"
    )
    parser.add_argument("--json", type=Path, help=f"where to write (default {RESULTS})")
    parser.add_argument("--examples", type=int, help="schemathesis examples per operation")
    args = parser.parse_args(argv)
    examples = args.examples or (1 if args.quick else 60)
    results: dict[str, Any] = {
        **run_header("bench_security.py", quick=args.quick),
        "examples": examples,
        "ssrf_table_size": _table_size(),
        "spec_writes": _spec_writes(),
    }
    with tempfile.TemporaryDirectory() as tmp:
        figures_path = Path(tmp) / "figures.jsonl"
        results["run"] = run_suites(examples, args.quick, figures_path, Path(tmp) / "junit.xml")
        results |= collect(figures_path)
    print(format_report(results))
    out = args.json or (None if args.quick else RESULTS)
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
        print(f"results written to {out}")
    ok = (
        results["run"]["exit_status"] == 0
        and results["ssrf"]["connections_seen"] == 0
        and results["schemathesis"]["5xx"] == 0
        and results["secrets"]["leaks"] == 0
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
