"""``gin-arena bot check``: passes the house bots, fails hostile ones naming the illegal answers."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable

import pytest
from hostile import (
    RawBot,
    card_not_held,
    discards_taken_card,
    house,
    misknocker,
    running,
    sdk_bot,
    wrong_phase,
)

from arena.bots.check import CheckReport, check_bot
from arena.bots.house import HOUSE_KINDS, house_bot
from arena.protocol.signing import generate_secret
from arena.protocol.wire import ActRequest, WireAction


def failures(report: CheckReport) -> dict[str, str]:
    return {i.name: i.detail for i in report.items if not i.passed and not i.warning}


@pytest.mark.parametrize("kind", HOUSE_KINDS)
def test_house_bots_pass(kind: str) -> None:
    bot = house(kind)
    with running(bot):
        report = check_bot(bot.url, repeats=5)
    assert report.passed, report.render()
    assert failures(report) == {}
    assert sum(i.name.startswith("act: ") for i in report.items) >= 10


def test_a_signed_house_bot_passes_and_refuses_a_forged_request() -> None:
    secret = generate_secret()
    signed = house_bot("greedy", secret=secret)
    with running(signed):
        report = check_bot(signed.url, secret=secret, repeats=0)
    assert report.passed, report.render()
    forged = next(i for i in report.items if i.name == "refuses a forged signature")
    assert forged.passed and "401" in forged.detail


HOSTILE: list[tuple[Callable[[ActRequest], WireAction], str, str]] = [
    (card_not_held, "act: discard", "is not in the hand"),
    (wrong_phase, "act: draw", "discard is not allowed in the draw phase"),
    (
        discards_taken_card,
        "act: discard after taking the discard (restricted card)",
        "was just taken from the discard pile",
    ),
]


@pytest.mark.parametrize(("act", "check", "detail"), HOSTILE, ids=[h[0].__name__ for h in HOSTILE])
def test_hostile_bots_fail_with_the_illegal_answer_named(
    act: Callable[[ActRequest], WireAction], check: str, detail: str
) -> None:
    bot = sdk_bot(act, act.__name__)
    with running(bot):
        report = check_bot(bot.url, repeats=0)
    assert not report.passed
    failed = failures(report)
    assert check in failed, report.render()
    assert failed[check].startswith("illegal answer ")
    assert detail in failed[check]
    assert report.render().endswith("RESULT: FAIL")


def test_misknocks_are_legal_answers_for_the_checker() -> None:
    bot = sdk_bot(misknocker, "misknocker")
    with running(bot):
        report = check_bot(bot.url, repeats=0)
    assert report.passed, report.render()
    assert any("a misknock: legal, but penalised" in i.detail for i in report.items)


def test_a_bot_answering_500_fails_every_act() -> None:
    bot = RawBot("status_500")
    with running(bot):
        report = check_bot(bot.url, repeats=0)
    failed = failures(report)
    assert len([n for n in failed if n.startswith("act: ")]) == 10
    assert all(d.startswith("status: HTTP 500") for n, d in failed.items() if n.startswith("act: "))


def test_a_wrong_protocol_version_fails_at_once() -> None:
    bot = RawBot("wrong_version")
    with running(bot):
        report = check_bot(bot.url, repeats=0)
    assert not report.passed
    (item,) = report.items
    assert "gin-arena/2" in item.detail


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "arena.cli", "bot", "check", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_the_command_fails_a_hostile_bot_with_exit_status_1() -> None:
    bot = sdk_bot(discards_taken_card, "taker")
    with running(bot):
        done = _cli(bot.url, "--repeats", "0")
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    assert lines[-1] == "RESULT: FAIL"
    fail = [line for line in lines if "[FAIL]" in line]
    assert any(
        "act: discard after taking the discard (restricted card): illegal answer discard" in line
        and "was just taken from the discard pile" in line
        for line in fail
    ), done.stdout


def test_the_command_passes_a_house_bot_with_exit_status_0() -> None:
    bot = house("strong")
    with running(bot):
        done = _cli(bot.url, "--repeats", "3")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[-1] == "RESULT: PASS"
