"""The live pages in a real headless Chromium, against the real server (waitress, with the
embedded default's LocalExecutor playing the matches in its worker process) and a match that is
being played by two deliberately slow house bots:

* the match page follows the match by itself (public view: hands as face-down counts), then
  turns into the whole replay when the match ends;
* the tournament page, open meanwhile, gets its champion in place (no reload) when the match
  that decides it finishes;
* the finished replay: autoplay advances and pauses, the keyboard steps, deal chips and deep
  links land on the board and scroll to it, and the per-seat view shows only that seat's
  cards and what that bot was sent and answered;
* no page (leaderboard, bot, match, tournament, ladder, rules, the lists, SPRT tests) scrolls
  sideways at 390 px, and the browser logs no errors.

Screenshots are saved as test artefacts in ``test-artifacts/browser/`` at the repository's root
(ignored by git; one PNG per view, named after the test and the view). Needs Debian's
``chromium`` and ``chromedriver``, like the replay viewer's browser test (whose fixtures this
reuses); without them it skips with one loud line, except under ``CI=true``.
"""

from __future__ import annotations

import base64
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from test_replay_browser import (  # noqa: F401 - browser is a fixture
    WAIT_S,
    _engine_positions,
    _require_browser,
    _text,
    browser,
)
from web_data import house_bots, populate

from arena.api.server import ApiServer
from arena.bots.sdk import BotServer
from arena.bots.strategies import STRATEGIES
from arena.db.session import Database
from arena.protocol.wire import ActRequest, WireAction
from arena.reading.queries import matches as match_queries
from arena.rules.ruleset import RuleSet
from arena.services.bots import register_bot
from arena.services.tournaments import create_tournament, start_tournament
from arena.settings import load_settings

pytestmark = pytest.mark.browser

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "browser"
#: Each answer of the slow bots takes this long, so the match lasts while the browser watches.
THINK_S = 0.1
#: A match of about 150 answers: some 15 s at THINK_S, and more on a busy machine. The
#: deadline is generous so that a loaded machine (a CI run) cannot make the slow bots fault
#: out, or forfeit at the start, before the browser has seen the match being played.
LIVE_RULES = RuleSet(target=100, best_of=1, deadline_ms=10_000)
#: How long a live condition may take to come true (the whole match at most, with margin).
LIVE_WAIT_S = 240
PHONE = {"width": 390, "height": 844, "deviceScaleFactor": 1, "mobile": True}


class SlowStrategy:
    """A house strategy that thinks for THINK_S before each answer."""

    def __init__(self, kind: str) -> None:
        self.inner = STRATEGIES[kind](0)

    def __call__(self, obs: ActRequest) -> WireAction | dict[str, Any]:
        time.sleep(THINK_S)
        return self.inner(obs)


@dataclass
class LiveArena:
    base: str
    db: Database
    finished_match: int  # a short match played before the server started (one fault in it)
    finished_tournament: int
    bots: dict[str, int]
    live_tournament: int
    live_match: int


def _slow_bots() -> list[BotServer]:
    return [
        BotServer(SlowStrategy("greedy"), name="slow-greedy").start(),
        BotServer(SlowStrategy("strong"), name="slow-strong").start(),
    ]


@pytest.fixture(scope="module")
def live_arena(
    sqlite_template: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveArena]:
    """Finished matches and a finished tournament, then a two-bot round robin of the slow bots
    whose one match the server's own executor plays while the first test watches (one arena
    for the module: playing it is the slow part)."""
    _require_browser()
    path = tmp_path_factory.mktemp("live") / "arena.db"
    shutil.copy(sqlite_template, path)
    url = f"sqlite:///{path}"
    db = Database(url)
    with house_bots(["greedy", "strong"]) as servers:
        data = populate(db, servers)
    slow = _slow_bots()
    try:
        ids = [register_bot(db, name=s.info.name, owner="t", url=s.url).bot_id for s in slow]
        cup = create_tournament(
            db, name="Live Cup", format_name="round_robin", bot_ids=ids, rules=LIVE_RULES, seed=4
        )
        scheduled: list[int] = []
        start_tournament(db, cup, scheduled.extend)  # the executor's pickup finds it
        settings = load_settings(
            {},
            database_url=url,
            allow_loopback=True,
            rate_limit="",
            worker_processes=1,
            ladder_interval_seconds=3600,
            health_interval_seconds=3600,
        )
        server = ApiServer(settings, port=0, threads=4)
        thread = threading.Thread(target=server.run, name="live-server", daemon=True)
        thread.start()
        try:
            yield LiveArena(
                server.url,
                db,
                max(data.matches),
                data.tournament_id,
                data.bots,
                cup,
                scheduled[0],
            )
        finally:
            server.stop()
            thread.join(timeout=60)
    finally:
        for s in slow:
            s.stop()
        db.dispose()


def _until(driver: Any, condition: Callable[[Any], Any], seconds: float = WAIT_S) -> Any:
    from selenium.webdriver.support.ui import WebDriverWait  # noqa: PLC0415

    return WebDriverWait(driver, seconds, poll_frequency=0.1).until(condition)


def _shot(driver: Any, name: str) -> None:
    """The whole page (not only the window) as ``ARTIFACTS/<name>.png``."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    size = driver.execute_cdp_cmd("Page.getLayoutMetrics", {})["cssContentSize"]
    clip = {"x": 0, "y": 0, "width": size["width"], "height": size["height"], "scale": 1}
    shot = driver.execute_cdp_cmd(
        "Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True, "clip": clip}
    )
    (ARTIFACTS / f"{name}.png").write_bytes(base64.b64decode(shot["data"]))


def _severe(driver: Any) -> list[dict[str, Any]]:
    return [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]


#: The board's cards by seat: faces (their data-card) and face-down backs.
_READ_SEATS = """
const faces = (s) => Array.from(document.querySelectorAll(`#seat-${s} .hand .card[data-card]`),
                                (c) => c.dataset.card);
const backs = (s) => document.querySelectorAll(`#seat-${s} .hand .card.back`).length;
return {a: faces("a"), b: faces("b"), backs_a: backs("a"), backs_b: backs("b"),
        sent: Array.from(document.querySelectorAll("#seat-view .sent-hand .card"),
                         (c) => c.dataset.card)};
"""


def _summary(db: Database, match_id: int) -> dict[str, Any]:
    """What a failed assertion should say about the match: its status, error and forfeit."""
    detail = match_queries.match_detail(db, match_id)
    return {k: detail.get(k) for k in ("status", "error", "forfeit", "winner", "faults")}


def _position(driver: Any) -> tuple[int, int]:
    """Where the live viewer is: deals in its menu, and actions in the current deal's log (it
    follows the newest step, so this only grows while the match is played)."""
    deals, steps = driver.execute_script(
        "return [document.getElementById('deal-select').options.length,"
        " document.querySelectorAll('#log li').length];"
    )
    return int(deals), int(steps)


def _mid_deal_concealed(driver: Any) -> bool:
    """The public view in the middle of a deal: no card face in either hand, only backs."""
    menu = _text(driver, "deal-select").splitlines()
    board = driver.execute_script(_READ_SEATS)
    return (
        bool(menu)
        and "being played" in menu[-1]
        and board["a"] == board["b"] == []
        and (board["backs_a"] >= 10 and board["backs_b"] >= 10)
    )


def test_a_running_match_is_followed_live_then_becomes_its_replay(
    live_arena: LiveArena,
    browser: Any,  # noqa: F811 - the fixture imported above
) -> None:
    base, match = live_arena.base, live_arena.live_match
    # The tournament page first, marked: when its match ends it must update without a reload.
    browser.get(f"{base}/tournaments/{live_arena.live_tournament}")
    browser.execute_script("window.__notReloaded = true;")
    tournament_tab = browser.current_window_handle

    browser.switch_to.new_window("tab")
    browser.get(f"{base}/matches/{match}")
    viewer = browser.find_elements("id", "replay")
    assert viewer, f"no viewer on the match page; the match: {_summary(live_arena.db, match)}"
    assert "Live" in viewer[0].text, f"not live; the match: {_summary(live_arena.db, match)}"
    _until(browser, lambda d: _position(d) >= (1, 2), LIVE_WAIT_S)  # the first steps arrived
    seen = _position(browser)
    _until(browser, lambda d: _position(d) > seen, LIVE_WAIT_S)  # and more, untouched
    # Mid-deal the public view shows no card of either hand, only how many there are.
    _until(browser, _mid_deal_concealed, LIVE_WAIT_S)
    assert "Live" in _text(browser, "live-status")
    _shot(browser, "live-match")
    browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", PHONE)
    assert browser.execute_script("return document.documentElement.scrollWidth") <= 390
    _shot(browser, "live-match-390")
    browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})

    # The end: the page reloads into the finished match, with its replay embedded.
    _until(browser, lambda d: d.find_elements("id", "replay-data"), LIVE_WAIT_S)
    _until(browser, lambda d: " / " in _text(d, "step-counter"))
    assert "Replay" in _text(browser, "replay")
    positions = _engine_positions(live_arena.db, match)
    assert len(browser.find_elements("css selector", "#deal-select option")) == len(positions)
    _shot(browser, "live-match-finished")
    assert _severe(browser) == []

    browser.switch_to.window(tournament_tab)
    _until(browser, lambda d: "Champion" in d.page_source and "to be decided" not in
           d.find_element("css selector", ".stat-card:nth-child(2)").text, LIVE_WAIT_S)  # fmt: skip
    assert browser.execute_script("return window.__notReloaded === true")
    assert not browser.find_element("id", "live-status").is_displayed(), "over: no more live"
    assert f'href="/matches/{match}"' in browser.page_source
    _shot(browser, "live-tournament-finished")
    assert _severe(browser) == []


def test_the_replay_viewer_autoplays_steps_by_key_links_deals_and_shows_one_seat(
    live_arena: LiveArena,
    browser: Any,  # noqa: F811 - the fixture imported above
) -> None:
    from selenium.webdriver.common.by import By  # noqa: PLC0415
    from selenium.webdriver.common.keys import Keys  # noqa: PLC0415
    from selenium.webdriver.support.ui import Select  # noqa: PLC0415

    base, match = live_arena.base, live_arena.finished_match
    positions = _engine_positions(live_arena.db, match)
    browser.set_window_size(1280, 800)
    browser.get(f"{base}/matches/{match}")
    _until(browser, lambda d: _text(d, "step-counter").startswith("0 / "))
    last = len(positions[0]) - 1

    # Autoplay at the fastest speed moves on by itself; Space pauses it.
    Select(browser.find_element(By.ID, "speed")).select_by_visible_text("8×")
    browser.find_element(By.ID, "btn-play").click()
    _until(browser, lambda d: not _text(d, "step-counter").startswith("0 / "))
    body = browser.find_element(By.TAG_NAME, "body")
    body.send_keys(" ")
    assert browser.find_element(By.ID, "btn-play").get_attribute("aria-pressed") == "false"

    # The keyboard still steps.
    body.send_keys(Keys.HOME)
    assert _text(browser, "step-counter") == f"0 / {last}"
    body.send_keys(Keys.ARROW_RIGHT)
    body.send_keys(Keys.ARROW_RIGHT)
    assert _text(browser, "step-counter") == f"2 / {last}"
    body.send_keys(Keys.ARROW_LEFT)
    assert _text(browser, "step-counter") == f"1 / {last}"
    body.send_keys(Keys.END)
    assert _text(browser, "step-counter") == f"{last} / {last}"
    assert "before the deal" not in _text(browser, "deal-score")
    assert "after the deal" in _text(browser, "deal-score")
    assert "Space" in _text(browser, "replay"), "the page documents its keys"

    # A deal chip is a link to its deal's first position.
    if len(positions) > 1:
        browser.find_element(By.CSS_SELECTOR, "a.deal-chip[href$='-d2-s0']").click()
        _until(browser, lambda d: _text(d, "step-counter") == f"0 / {len(positions[1]) - 1}")
        assert "deal 2, before the deal" in _text(browser, "deal-score")

    # A deep link opens on its step and scrolls the board into view.
    browser.get(f"{base}/")
    browser.get(f"{base}/matches/{match}#g1-d1-s3")
    _until(browser, lambda d: _text(d, "step-counter") == f"3 / {last}")
    top = browser.execute_script(
        "return document.getElementById('replay').getBoundingClientRect().top"
    )
    assert abs(top) <= 2, top

    # The seat view (V cycles both hands, seat a, seat b): only that seat's cards on the board,
    # and at its own step what it was sent (its hand then), its raw answer and latency.
    deal = positions[0]
    mine = next(i for i in range(1, last + 1) if deal[i - 1].to_act == 0)
    browser.find_element(By.TAG_NAME, "body").send_keys("v")
    assert (
        Select(browser.find_element(By.ID, "view-select")).first_selected_option.get_attribute(
            "value"
        )
        == "a"
    )
    browser.get(f"{base}/matches/{match}#g1-d1-s{mine}")
    _until(browser, lambda d: _text(d, "step-counter") == f"{mine} / {last}")
    Select(browser.find_element(By.ID, "view-select")).select_by_value("a")
    _until(browser, lambda d: "was sent and answered" in _text(d, "seat-view"))
    board = browser.execute_script(_READ_SEATS)
    assert sorted(board["a"]) == sorted(str(c) for c in deal[mine].hand_of(0))
    assert board["b"] == [] and board["backs_b"] == len(deal[mine].hand_of(1))
    assert sorted(board["sent"]) == sorted(str(c) for c in deal[mine - 1].hand_of(0))
    panel = _text(browser, "seat-view")
    assert "Raw answer" in panel and "Latency" in panel and "Fault" in panel
    _shot(browser, "replay-seat-a")
    Select(browser.find_element(By.ID, "view-select")).select_by_value("")
    board = browser.execute_script(_READ_SEATS)
    assert len(board["b"]) == len(deal[mine].hand_of(1)), "both hands again"
    assert not browser.find_element(By.ID, "seat-view").is_displayed()
    assert _severe(browser) == []


def test_no_page_scrolls_sideways_on_a_390_px_phone(
    live_arena: LiveArena,
    browser: Any,  # noqa: F811 - the fixture imported above
) -> None:
    base = live_arena.base
    browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", PHONE)
    pages = {
        "leaderboard": "/",
        "bot": f"/bots/{live_arena.bots['flaky-greedy']}",
        "match": f"/matches/{live_arena.finished_match}",
        "tournament": f"/tournaments/{live_arena.finished_tournament}",
        "live-tournament": f"/tournaments/{live_arena.live_tournament}",
        "ladder": "/ladder",
        "rules": "/rules",
        "matches": "/matches",
        "tournaments": "/tournaments",
        "tests": "/tests",
    }
    wide = {}
    for name, path in pages.items():
        browser.get(base + path)
        _until(browser, lambda d: d.execute_script("return document.readyState") == "complete")
        width = browser.execute_script("return document.documentElement.scrollWidth")
        _shot(browser, f"phone-{name}")
        if width > 390:
            wide[name] = width
    assert wide == {}, wide
    assert _severe(browser) == []
