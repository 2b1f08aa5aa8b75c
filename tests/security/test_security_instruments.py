"""The instruments of the SSRF suite see what they must (a test that passes because its
tripwire is blind proves nothing), and ``benchmarks/README.md`` gives the figures of the last
full ``benchmarks/bench_security.py`` run (``results/security.json``)."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest
from ssrf_table import SSRF_CASES, FakeResolver, Sentinel, Tripwire

ROOT = Path(__file__).resolve().parents[2]


def test_the_sentinel_and_the_tripwire_see_a_connection_to_the_sentinel() -> None:
    sentinel = Sentinel()
    try:
        with Tripwire.get().armed() as seen, socket.create_connection(("127.0.0.1", sentinel.port)):
            pass
        assert sentinel.connections() == 1
        assert [a[1] for a in seen.connects] == [sentinel.port]
    finally:
        sentinel.close()


def test_the_tripwire_refuses_a_connection_off_this_machine_before_it_is_made() -> None:
    with (
        Tripwire.get().armed() as seen,
        socket.socket() as sock,
        pytest.raises(OSError, match="tripwire"),
    ):
        sock.connect(("10.255.255.1", 80))
    assert seen.connects == [("10.255.255.1", 80)]


def test_the_tripwire_sees_a_name_lookup() -> None:
    with Tripwire.get().armed() as seen:
        socket.getaddrinfo("127.0.0.1", 80)
    assert seen.lookups == ["127.0.0.1"]


def test_the_fake_resolver_fails_an_unknown_name_as_nxdomain() -> None:
    resolver = FakeResolver()
    with pytest.raises(socket.gaierror):
        resolver("unknown.example.com", 80)
    assert resolver.calls == [("unknown.example.com", 80)]


def test_the_readme_gives_the_figures_of_results_security_json() -> None:
    figures = json.loads((ROOT / "benchmarks/results/security.json").read_text(encoding="utf-8"))
    readme = (ROOT / "benchmarks/README.md").read_text(encoding="utf-8")
    section = readme.split("## `bench_security.py`", 1)[1].split("\n## ", 1)[0]
    assert figures["mode"] == "full" and figures["ssrf_table_size"] == len(SSRF_CASES)
    assert figures["ssrf"]["connections_seen"] == 0 and figures["schemathesis"]["5xx"] == 0
    tests = figures["run"]["tests"]
    for label, value in [
        ("SSRF table", figures["ssrf_table_size"]),
        ("SSRF checks (table x entry points)", figures["ssrf"]["checks"]),
        ("refused before any connection", figures["ssrf"]["refused"]),
        ("connections seen", figures["ssrf"]["connections_seen"]),
        ("authorisation matrix cases passed", tests["authorisation"]["matrix_passed"]),
        ("reads scanned for credentials", figures["secrets"]["reads_scanned"]),
        ("credentials found in reads", figures["secrets"]["leaks"]),
        ("schemathesis requests", figures["schemathesis"]["requests"]),
        ("schemathesis 5xx", figures["schemathesis"]["5xx"]),
    ]:
        assert f"| {label} | {value:,} |" in section, label
