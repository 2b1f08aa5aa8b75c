"""Registration through the service (what the API and ``gin-arena bot register`` call): the
owner may bring the secret, the check is signed with it so a signing bot is checked for real,
and one URL policy holds at registration, at a URL change and when a worker connects, with a
refusal that says how to allow loopback in development (real HTTP bots on loopback)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sqlalchemy import select

from arena.bots.house import house_bot
from arena.bots.sdk import BotServer
from arena.db.models import BotRow, MatchRow
from arena.db.session import Database
from arena.playing.jobs import JobStatus, run_match_job
from arena.protocol.signing import SecretError, generate_secret
from arena.rules.ruleset import RuleSet
from arena.services.bots import (
    BotNameTakenError,
    BotRefusedError,
    activate_bot,
    change_bot,
    enroll_bot,
    find_bot,
    list_registered_bots,
    probe_registered_bot,
    register_bot,
    set_status,
)
from arena.services.matches import schedule_match
from arena.settings import load_settings
from arena.states import BotStatus, MatchStatus

DEV = load_settings({}, allow_loopback=True)
PRODUCTION = load_settings({})
SECRET = generate_secret()


@pytest.fixture(scope="module")
def signing() -> Iterator[BotServer]:
    """A bot that verifies every POST with SECRET (401 otherwise)."""
    server = house_bot("greedy", name="signing", secret=SECRET).start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def plain() -> Iterator[BotServer]:
    server = house_bot("random", name="plain").start()
    yield server
    server.stop()


def bot_names(db: Database) -> list[str]:
    with db.session() as session:
        return list(session.scalars(select(BotRow.name).order_by(BotRow.id)))


def test_a_signing_bot_registered_with_its_own_secret_passes_the_signed_check(
    db: Database, signing: BotServer
) -> None:
    enrolment = enroll_bot(db, DEV, name="signer", url=signing.url, owner="o", secret=SECRET)
    assert enrolment.secret == SECRET and enrolment.token.startswith("gat_")
    assert enrolment.check.passed and not enrolment.check.signatures_required
    acts = [i for i in enrolment.check.items if i.name.startswith("POST /act")]
    assert acts and acts[0].passed and acts[0].detail.startswith("answered")
    with db.session() as session:
        assert session.get_one(BotRow, enrolment.bot_id).secret == SECRET


def test_a_signing_bot_without_its_secret_is_refused_with_the_reason(
    db: Database, signing: BotServer
) -> None:
    """The arena makes a secret the bot cannot know, signs the check with it, the bot refuses:
    not registered (it used to be accepted after an unsigned check it refused)."""
    with pytest.raises(BotRefusedError) as refused:
        enroll_bot(db, DEV, name="signer", url=signing.url, owner="o")
    message = str(refused.value)
    assert "\n" not in message
    assert "refused the arena's signed request" in message and "secret" in message
    assert refused.value.report.signatures_required
    assert bot_names(db) == []


def test_a_bot_that_verifies_nothing_is_registered_with_a_secret_made_for_it(
    db: Database, plain: BotServer
) -> None:
    enrolment = enroll_bot(db, DEV, name="plain", url=plain.url, owner="o")
    assert enrolment.secret.startswith("whsec_") and enrolment.check.passed
    listed = list_registered_bots(db)
    assert [(b.id, b.name, b.owner, b.url, b.status) for b in listed] == [
        (enrolment.bot_id, "plain", "o", plain.url, BotStatus.ACTIVE)
    ]


@pytest.mark.parametrize(
    "secret",
    ["not-a-secret", "whsec_", "whsec_@@@@", "whsec_" + "QUFB" * 4, "whsec_" + "QUFB" * 30],
)
def test_a_malformed_secret_is_refused_before_the_bot_is_called(
    db: Database, plain: BotServer, secret: str
) -> None:
    with pytest.raises(SecretError):
        enroll_bot(db, DEV, name="plain", url=plain.url, owner="o", secret=secret)
    assert bot_names(db) == []


def test_a_taken_name_is_refused(db: Database, plain: BotServer) -> None:
    enroll_bot(db, DEV, name="plain", url=plain.url, owner="o")
    with pytest.raises(BotNameTakenError, match="already exists"):
        enroll_bot(db, DEV, name="plain", url=plain.url, owner="o")


# --- one URL policy -------------------------------------------------------------------------


def test_registration_refuses_loopback_naming_the_setting_that_allows_it(
    db: Database, plain: BotServer
) -> None:
    with pytest.raises(BotRefusedError) as refused:
        enroll_bot(db, PRODUCTION, name="plain", url=plain.url, owner="o")
    assert "loopback" in str(refused.value)
    assert "ARENA_ALLOW_LOOPBACK=1" in str(refused.value)
    assert bot_names(db) == []


def test_a_url_change_to_loopback_is_refused_the_same_way(db: Database, plain: BotServer) -> None:
    bot = register_bot(db, name="moving", owner="o", url="http://8.8.8.8/").bot_id
    with pytest.raises(BotRefusedError, match="ARENA_ALLOW_LOOPBACK=1"):
        probe_registered_bot(db, PRODUCTION, bot, url=plain.url)
    assert probe_registered_bot(db, DEV, bot, url=plain.url).passed


@pytest.mark.parametrize(
    ("url", "why"),
    [("http://10.1.2.3:8080/", r"private \(10\.0\.0\.0/8\)"), ("http://127.0.0.1:9/", "loopback")],
)
def test_registration_refuses_a_private_url_from_every_caller(
    db: Database, url: str, why: str
) -> None:
    """Registering (the API and ``gin-arena bot register``), moving a bot and reactivating it
    all pass the same URL check in the service: a private address is refused by each, with
    the same reason, and nothing is stored."""
    with pytest.raises(BotRefusedError, match=why) as registered:
        enroll_bot(db, PRODUCTION, name="private", url=url, owner="o")
    assert bot_names(db) == []
    bot = register_bot(db, name="public", owner="o", url="http://8.8.8.8/").bot_id
    with pytest.raises(BotRefusedError, match=why) as moved:
        change_bot(db, PRODUCTION, bot, name="renamed", url=url)
    assert (find_bot(db, bot).name, find_bot(db, bot).url) == ("public", "http://8.8.8.8/")
    register_bot(db, name="parked", owner="o", url=url)
    parked = next(b.id for b in list_registered_bots(db) if b.name == "parked")
    set_status(db, parked, BotStatus.INACTIVE)
    with pytest.raises(BotRefusedError, match=why) as reactivated:
        activate_bot(db, PRODUCTION, parked)
    assert find_bot(db, parked).status is BotStatus.INACTIVE
    reasons = {str(e.value).partition(": ")[2] for e in (registered, moved, reactivated)}
    assert len(reasons) == 1, reasons


def test_a_worker_refuses_a_stored_loopback_bot_unless_loopback_is_allowed(
    db: Database, plain: BotServer
) -> None:
    """A bot stored with a loopback URL (registered under ARENA_ALLOW_LOOPBACK=1) is not
    played by a worker running without it: the match is void (the worker's setting, no loss
    for either bot, where it used to be a double forfeit) and its error names the setting."""
    ids = [register_bot(db, name=n, owner="o", url=plain.url).bot_id for n in ("a", "b")]
    with db.session() as session:
        refused, played = (
            schedule_match(session, *ids, rules=RuleSet(target=25), seed=seed).id for seed in (1, 2)
        )
    assert run_match_job(db, PRODUCTION, refused, "w").status is JobStatus.FAILED
    assert run_match_job(db, DEV, played, "w").status is JobStatus.RECORDED
    with db.session() as session:
        first, second = session.get_one(MatchRow, refused), session.get_one(MatchRow, played)
        assert first.status is MatchStatus.FAILED and first.forfeit_seat is None
        assert first.winner is None and first.error is not None
        assert "ARENA_ALLOW_LOOPBACK=1" in first.error
        # The reason is public (match pages, the other owner's events): no URL, no host.
        assert "127.0.0.1" not in first.error and "http://" not in first.error
        assert second.forfeit_seat is None and second.winner in ("a", "b")
