"""A stranger's bot, written from ``api_spec/`` and ``docs/RULES.md`` alone, is never faulted.

``outsider_bot.py`` is a standard-library bot that imports nothing from ``arena``, keeps no
game state (its deadwood comes from its hand in each ``/act``), verifies Standard Webhooks
signatures as ``api_spec/README.md`` says, knocks with ``"melds": []``, with declared melds and
with no ``melds`` at all, goes gin, answers ``misknock_response`` and ``last_chance``, and checks
every promise of the spec it can see in a body (a broken one is a *surprise*). Here it is run
the way its author would: ``gin-arena bot check URL --secret`` with the secret it brought, and
``gin-arena match`` against a house bot and against itself under every misknock policy. Each
record is read as the spec describes it: no fault, each deal dealt from its ``deck`` as
documented and replayed to the recorded hands, gin a knock with deadwood 0, misknocks where the
deadwood is over the limit, each answer kept as sent, every action entry valid against
``openapi.yaml``. Also pinned: the yaml's ``Action`` accepts and refuses what the arena does,
each answer example is legal for the request ``api_spec/README.md`` names, and the registration
refusal tells a CLI user which option to use.
"""

from __future__ import annotations

import base64
import json
import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from hostile import running
from outsider_bot import (
    WINDOW_S,
    Observer,
    Verifier,
    deadwood,
    deadwood_with,
    make_server,
    value,
)

from arena.bots.check import check_bot
from arena.bots.house import house_bot
from arena.protocol.wire import WireError, decode_action

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "api_spec"
GIN_ARENA = str(Path(sys.executable).with_name("gin-arena"))
#: Generous: the box may be loaded, and a timeout would be a fault the bot did not commit.
DEADLINE = "deadline_ms=5000"
SHORT = ["--rule", "target=100", "--rule", "best_of=1", "--rule", DEADLINE]


def new_secret() -> str:
    """What the author brings: ``whsec_`` and the base64 of 32 random bytes."""
    return "whsec_" + base64.b64encode(os.urandom(32)).decode()


@contextmanager
def serving(
    *, secret: str | None, misknock: bool = False, verifier: Verifier | None = None
) -> Iterator[tuple[str, Observer]]:
    """The outsider bot on a free loopback port, with the observer of its surprises."""
    observer = Observer()
    server = make_server(secret=secret, misknock=misknock, observer=observer, verifier=verifier)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", observer
    finally:
        server.shutdown()
        server.server_close()


def gin_arena(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "ARENA_ALLOW_LOOPBACK": "1"}
    return subprocess.run(
        [GIN_ARENA, *args],
        check=False,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=cwd,
    )


# --- bot check, as the author runs it ------------------------------------------------------------


def test_outsider_bot_passes_bot_check_with_the_secret_it_brought() -> None:
    secret = new_secret()
    with serving(secret=secret) as (url, observer):
        done = gin_arena("bot", "check", url, "--secret", secret, "--repeats", "0")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "RESULT: PASS" in done.stdout
    for line in (
        "[PASS] refuses a replayed webhook-id: refused (HTTP 409)",
        "[PASS] refuses a timestamp from the future: refused (HTTP 401)",
        "[PASS] accepts two signatures (a secret rotation)",
    ):
        assert line in done.stdout, done.stdout
    assert observer.surprises == []
    assert {"misknock_response", "last_chance"} <= set(observer.phases)


class OneSignatureVerifier(Verifier):
    """Compares the whole ``webhook-signature`` header with its own: refuses a rotation's two."""

    def verify(self, headers: Any, body: bytes) -> int:
        signatures = headers.get("webhook-signature") or ""
        if len(signatures.split()) > 1:
            return 401
        return super().verify(headers, body)


class PastOnlyVerifier(Verifier):
    """Refuses stale timestamps but takes any from the future."""

    def fresh(self, stamp: int, now: float) -> bool:
        return now - stamp <= WINDOW_S


@pytest.mark.parametrize(
    ("verifier", "check"),
    [
        (OneSignatureVerifier, "accepts two signatures (a secret rotation)"),
        (PastOnlyVerifier, "refuses a timestamp from the future"),
    ],
    ids=["one_signature_only", "future_timestamps_accepted"],
)
def test_bot_check_fails_a_bot_that_would_break_in_a_rotation_or_take_a_future_timestamp(
    verifier: type[Verifier], check: str
) -> None:
    secret = new_secret()
    with serving(secret=secret, verifier=verifier(secret)) as (url, _):
        report = check_bot(url, secret=secret, repeats=0)
    failed = [i.name for i in report.items if not i.passed and not i.warning]
    assert failed == [check], report.render()


# --- matches, and their records read as the spec describes them ----------------------------------


def _cards(text: str) -> list[str]:
    return [text[i : i + 2] for i in range(0, len(text), 2)]


def _canonical(card: str) -> str:
    card = "T" + card[2] if card.startswith("10") else card
    return card[0].upper() + card[1].lower()


def _deal_knock_limit(rules: dict[str, Any], upcard: str) -> int:
    if not rules["upcard_sets_knock_limit"]:
        return int(rules["knock_limit"])
    return 0 if upcard[0] == "A" else value(upcard)


def replay_problems(rules: dict[str, Any], hand: dict[str, Any]) -> list[str]:
    """Replay one deal from its ``deck`` as api_spec/README.md deals it; what disagrees."""
    problems = []
    deck = _cards(hand["deck"])
    if sorted(deck) != sorted({*deck}) or len(deck) != 52:
        return [f"deck is not 52 distinct cards: {hand['deck']}"]
    dealer = hand["dealer"]
    other = "a" if dealer == "b" else "b"
    hands = {other: deck[0:20:2], dealer: deck[1:20:2]}  # non-dealer first, one at a time
    pile, stock = [deck[20]], deck[21:]  # the 21st card is the upcard, the 22nd drawn first
    limit = _deal_knock_limit(rules, deck[20])
    misknocks = []
    for i, entry in enumerate(hand["actions"]):
        seat, action = "ab"[entry[0]], entry[1]
        kind = action["action"]
        if len(entry) != 5 or entry[3] is not None:
            problems.append(f"action {i}: {entry!r} is a fault or has no raw answer")
        elif json.loads(entry[4])["action"] != kind:
            problems.append(f"action {i}: raw answer {entry[4]!r} is not {kind}")
        if kind == "take_discard":
            hands[seat].append(pile.pop())
        elif kind == "draw_stock":
            hands[seat].append(stock.pop(0))
        elif kind == "discard":
            hands[seat].remove(action["card"])
            pile.append(action["card"])
        elif kind == "knock":
            card = _canonical(action["card"])
            hands[seat].remove(card)
            melds = action.get("melds")
            left = deadwood_with(hands[seat], melds) if melds else deadwood(hands[seat])
            if left > limit:  # a misknock: the card stands as a discard (unless accepted)
                misknocks.append({"seat": seat, "card": card, "deadwood": left})
                pile.append(card)
            elif left == 0 and hand["outcome"] != "gin":
                problems.append(f"a knock leaving no deadwood is {hand['outcome']}, not gin")
            elif left and hand["outcome"] == "gin":
                problems.append(f"gin with {left} deadwood")
        elif kind == "accept_knock":
            pile.pop()
    if misknocks != hand["misknocks"]:
        problems.append(f"misknocks {misknocks} != recorded {hand['misknocks']}")
    for seat in "ab":
        if sorted(hands[seat]) != sorted(hand["hands"][seat].split()):
            problems.append(f"seat {seat} ends with {hands[seat]}, record {hand['hands'][seat]}")
    return problems


def replay_hand_validator() -> jsonschema.Draft202012Validator:
    spec = yaml.safe_load((SPEC / "openapi.yaml").read_text())
    schema = {"$ref": "#/components/schemas/ReplayHand", "components": spec["components"]}
    return jsonschema.Draft202012Validator(schema)


def rule_options(*fields: str) -> list[str]:
    """``--rule FIELD=VALUE`` for each field."""
    return [word for field in fields for word in ("--rule", field)]


MATCHES = {
    "against_house_strong": (rule_options("misknock=opponent_may_accept"), "strong"),
    "misknocks_open_hand": (rule_options("misknock=open_hand"), None),
    "misknocks_opponent_may_accept": (rule_options("misknock=opponent_may_accept"), None),
    "misknocks_penalty_points": (
        rule_options("misknock=penalty_points", "misknock_penalty=5"),
        None,
    ),
    "last_chance_and_proviso": (
        rule_options(
            "last_discard_chance=true", "allow_discard_of_taken_card=true", "knock_limit=0"
        ),
        "strong",
    ),
}


@pytest.mark.parametrize("case", sorted(MATCHES))
def test_outsider_bot_plays_a_match_with_no_fault_and_the_record_reads_as_documented(
    case: str,
) -> None:
    rules, house = MATCHES[case]
    mine, theirs = new_secret(), new_secret()
    with ExitStack() as stack:
        url_a, seen_a = stack.enter_context(serving(secret=mine, misknock=True))
        url_b, seen_b = stack.enter_context(serving(secret=theirs))
        if house is not None:
            opponent = house_bot(house, secret=theirs)
            stack.enter_context(running(opponent))
            url_b = opponent.url
        done = gin_arena(
            "match", url_a, url_b, "--seed", "3", "--secret-a", mine, "--secret-b", theirs,
            "--quiet", "--compact", *SHORT, *rules,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout)
    assert record["faults"] == [], record["faults"]
    assert record["forfeit"] is None
    assert seen_a.surprises == [] and seen_b.surprises == []
    assert seen_a.ends == 1  # and its record had no seed, deck, raw answer or foreign fault
    validator = replay_hand_validator()
    hands = [h for g in record["games"] for h in g["hands"]]
    for i, hand in enumerate(hands):
        errors = [e.message for e in validator.iter_errors(hand)]
        assert errors == [], f"deal {i}: {errors[:3]}"
        assert replay_problems(record["rules"], hand) == [], f"deal {i}"
    assert record["misknocks"], "the misknocking bot never misknocked: the case tests nothing"
    if "misknock=opponent_may_accept" in rules and house is None:
        assert seen_b.phases.get("misknock_response"), seen_b.phases
    if "last_discard_chance=true" in rules:
        assert seen_a.phases.get("last_chance"), seen_a.phases
    outsiders = (0,) if house else (0, 1)
    answers = [json.loads(e[4]) for h in hands for e in h["actions"] if e[0] in outsiders]
    knocks = [a for a in answers if a["action"] == "knock"]
    if "knock_limit=0" in rules:
        return  # gin only: too few knocks to play every style
    assert any(a.get("melds") == [] for a in knocks), "no knock with melds: [] was played"
    assert any(a.get("melds") for a in knocks), "no knock with declared melds was played"
    assert any(a["card"] != _canonical(a["card"]) for a in knocks), "no `10h`/`th` card played"


# --- the schema and the examples, read by a stranger ---------------------------------------------


def action_validator() -> jsonschema.Draft202012Validator:
    spec = yaml.safe_load((SPEC / "bot-protocol.yaml").read_text())
    schema = {"$ref": "#/components/schemas/Action", "components": spec["components"]}
    return jsonschema.Draft202012Validator(schema)


ANSWERS = [
    ({"action": "knock", "card": "As", "melds": None}, True),  # null: not declared
    ({"action": "knock", "card": "As", "melds": []}, True),
    ({"action": "big_gin", "melds": None}, True),
    ({"action": "discard", "card": "As", "melds": []}, True),
    ({"action": "discard"}, False),  # a discard needs a card
    ({"action": "knock"}, False),
    ({"action": "pass", "card": "As"}, False),  # a pass takes none
    ({"action": "big_gin", "card": "As"}, False),
    ({"action": "draw_stock", "card": "As"}, False),
    ({"action": "discard", "card": "As", "melds": [["As", "2s", "3s"]]}, False),
    ({"action": "pass", "melds": [["As", "2s", "3s"]]}, False),
]


@pytest.mark.parametrize(("answer", "accepted"), ANSWERS, ids=json.dumps)
def test_the_yaml_action_schema_accepts_and_refuses_what_the_arena_does(
    answer: dict[str, Any], accepted: bool
) -> None:
    assert action_validator().is_valid(answer) is accepted
    if accepted:
        decode_action(json.dumps(answer).encode())
    else:
        with pytest.raises(WireError) as caught:
            decode_action(json.dumps(answer).encode())
        assert caught.value.kind == "schema"


def readme_answer_pairs() -> dict[str, str]:
    """The table of api_spec/README.md "The examples": each answer and the request it answers."""
    text = (SPEC / "README.md").read_text()
    section = text[text.index("## The examples") :]
    return dict(
        re.findall(
            r"^\| `(act\.\w+\.response\.json)` \| `(act\.\w+\.request\.json)`", section, re.M
        )
    )


def test_readme_names_the_request_each_answer_example_answers() -> None:
    answers = sorted(p.name for p in (SPEC / "examples").glob("act.*.response.json"))
    assert sorted(readme_answer_pairs()) == answers


@pytest.mark.parametrize("answer", sorted(readme_answer_pairs()))
def test_answer_example_is_legal_for_the_request_the_readme_names(answer: str) -> None:
    request = json.loads((SPEC / "examples" / readme_answer_pairs()[answer]).read_text())
    action = json.loads((SPEC / "examples" / answer).read_text())
    assert action_validator().is_valid(action)
    legal = request["legal_actions"]
    if action in legal:
        return
    # Beyond the list only knocks (and big gin) with declared melds: a card it may discard,
    # the melds real melds of the hand, the deadwood within the deal's limit.
    assert action["action"] == "knock" and action.get("melds"), (action, legal)
    discardable = {a["card"] for a in legal if a["action"] in ("discard", "knock")}
    assert action["card"] in discardable
    kept = [c for c in request["hand"] if c != action["card"]]
    assert all(set(m) <= set(kept) for m in action["melds"])
    assert deadwood_with(kept, action["melds"]) <= request["knock_limit"]


# --- registration, as the author does it ----------------------------------------------------


def test_a_registration_refused_for_the_signature_names_the_cli_option(
    tmp_path: Path, sqlite_template: Path
) -> None:
    (tmp_path / "arena.db").write_bytes(sqlite_template.read_bytes())
    with serving(secret=new_secret()) as (url, _):
        done = gin_arena("bot", "register", "mine", url, "--secret", new_secret(), cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert "--secret whsec_" in done.stderr, done.stderr
