"""The replay viewer in a real headless Chromium: from the leaderboard to a match, stepping with
the buttons and the keyboard, the board shows exactly the engine's position at every step, a
fault link jumps to its step, and the browser logs no errors.

Needs Debian's ``chromium`` and ``chromedriver`` (``apt-get install chromium chromium-driver``;
``make test`` installs them when it can). Without them the test skips with one loud line, except
under ``CI=true``, where it fails.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from web_data import house_bots, populate, settings_for
from werkzeug.serving import make_server

from arena.api import close_app, create_app
from arena.db.session import Database
from arena.reading.replay import load_record
from arena.rules.record import DealRecord, replay_deal
from arena.rules.ruleset import RuleSet

pytestmark = pytest.mark.browser

IN_CI = os.environ.get("CI", "").lower() == "true"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
#: Headless and quiet: the machine's network is closed, so no background calls home.
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1280,1600",
)
WAIT_S = 10


def _require_browser() -> None:
    missing = [p for p in (CHROMIUM, CHROMEDRIVER) if not os.access(p, os.X_OK)]
    try:
        import selenium  # noqa: F401, PLC0415 - only this test needs it
    except ImportError:
        missing.append("the selenium package")
    if not missing:
        return
    message = f"browser tests need {', '.join(missing)}"
    if IN_CI:
        pytest.fail(f"{message}; CI=true requires them (apt-get install chromium chromium-driver)")
    print(f"\n!!! SKIPPING BROWSER TESTS: {message} (apt-get install chromium chromium-driver) !!!")
    pytest.skip(message)


@pytest.fixture
def site(sqlite_template: Path, tmp_path: Path) -> Iterator[tuple[str, Database, list[int]]]:
    """The app served over real HTTP on a free loopback port, with two real matches played."""
    _require_browser()
    path = tmp_path / "arena.db"
    shutil.copy(sqlite_template, path)
    db = Database(f"sqlite:///{path}")
    with house_bots(["greedy", "strong"]) as servers:
        data = populate(db, servers, tournament=False)
    app = create_app(settings_for(db.url), db=db)  # the real app: API, pages, gzip, limits
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, name="pages", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.port}", db, data.matches
    finally:
        server.shutdown()
        thread.join(timeout=10)
        server.server_close()
        close_app(app)
        db.dispose()


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[Any]:
    """Headless Chromium through chromedriver, with its own fresh profile."""
    _require_browser()
    from selenium import webdriver  # noqa: PLC0415

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={tmp_path / 'chromium-profile'}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    service = webdriver.ChromeService(executable_path=CHROMEDRIVER, log_output=subprocess.DEVNULL)
    driver = webdriver.Chrome(service=service, options=options)
    try:
        yield driver
    finally:
        driver.quit()


def _wait(driver: Any, condition: Any) -> Any:
    from selenium.webdriver.support.ui import WebDriverWait  # noqa: PLC0415

    return WebDriverWait(driver, WAIT_S).until(condition)


def _text(driver: Any, element_id: str) -> str:
    from selenium.webdriver.common.by import By  # noqa: PLC0415

    return str(driver.find_element(By.ID, element_id).text)


#: What the board shows, read in one round trip: both hands, the stock count, the discard top.
_READ_BOARD = """
const cards = (sel) => Array.from(document.querySelectorAll(sel), (c) => c.dataset.card);
const top = document.querySelector("#discard-top .card");
return {a: cards("#seat-a .hand .card"), b: cards("#seat-b .hand .card"),
        stock: document.getElementById("stock-count").textContent,
        top: top ? top.dataset.card || null : null};
"""


def _engine_positions(db: Database, match_id: int) -> list[list[Any]]:
    """Every state of every deal, straight from the engine (what the board must show)."""
    record = load_record(db, match_id).to_dict()
    rules = RuleSet.from_dict(record["rules"])
    return [
        list(replay_deal(DealRecord.from_dict(rules, hand)))
        for game in record["games"]
        for hand in game["hands"]
    ]


def _assert_board_shows(driver: Any, state: Any) -> None:
    board = driver.execute_script(_READ_BOARD)
    for seat, name in ((0, "a"), (1, "b")):
        assert sorted(board[name]) == sorted(str(c) for c in state.hand_of(seat))
    assert board["stock"] == str(state.stock_count)
    top = state.discard_top
    assert board["top"] == (None if top is None else str(top))


def test_stepping_through_a_replay_shows_the_engine_position(
    site: tuple[str, Database, list[int]], browser: Any
) -> None:
    from selenium.webdriver.common.by import By  # noqa: PLC0415
    from selenium.webdriver.common.keys import Keys  # noqa: PLC0415

    base, db, matches = site
    browser.get(base + "/")
    assert "Leaderboard" in browser.title
    newest = max(matches)
    browser.find_element(By.CSS_SELECTOR, f"a[href='/matches/{newest}']").click()
    _wait(browser, lambda d: _text(d, "step-counter").startswith("0 / "))
    assert f"Match #{newest}" in browser.title

    positions = _engine_positions(db, newest)
    deal = positions[0]
    last = len(deal) - 1
    assert _text(browser, "step-counter") == f"0 / {last}"
    _assert_board_shows(browser, deal[0])
    assert browser.find_element(By.ID, "btn-prev").get_attribute("disabled") is not None

    # Forward with the button until the first stock draw: the stock count drops by one.
    step = 0
    while deal[step + 1].stock_count == deal[step].stock_count:
        browser.find_element(By.ID, "btn-next").click()
        step += 1
        _assert_board_shows(browser, deal[step])
    browser.find_element(By.ID, "btn-next").click()
    step += 1
    assert _text(browser, "step-counter") == f"{step} / {last}"
    _assert_board_shows(browser, deal[step])
    assert int(_text(browser, "stock-count")) == 30
    assert browser.current_url.endswith(f"#g1-d1-s{step}")

    body = browser.find_element(By.TAG_NAME, "body")
    body.send_keys(Keys.ARROW_RIGHT)
    _assert_board_shows(browser, deal[step + 1])
    body.send_keys(Keys.ARROW_LEFT)
    body.send_keys(Keys.ARROW_LEFT)
    _assert_board_shows(browser, deal[step - 1])
    browser.find_element(By.ID, "btn-prev").click()
    _assert_board_shows(browser, deal[step - 2])
    assert _text(browser, "step-counter") == f"{step - 2} / {last}"

    body.send_keys(Keys.END)
    assert _text(browser, "step-counter") == f"{last} / {last}"
    _assert_board_shows(browser, deal[last])
    showdown = browser.find_element(By.ID, "showdown")
    assert showdown.is_displayed()
    outcome = deal[last].result.outcome.value
    label = {"big_gin": "Big gin", "dead": "Dead hand"}.get(outcome, outcome.capitalize())
    assert label in showdown.text
    assert browser.find_element(By.ID, "btn-next").get_attribute("disabled") is not None
    body.send_keys(Keys.HOME)
    assert _text(browser, "step-counter") == f"0 / {last}"
    assert not browser.find_element(By.ID, "showdown").is_displayed()

    if len(positions) > 1:
        body.send_keys(Keys.PAGE_DOWN)
        second = positions[1]
        assert _text(browser, "step-counter") == f"0 / {len(second) - 1}"
        _assert_board_shows(browser, second[0])

    # The flaky bot faulted in this match: its fault link jumps to that step.
    browser.find_element(By.CSS_SELECTOR, "a.jump").click()
    _wait(browser, lambda d: "Fault:" in _text(d, "action"))
    assert "illegal_action" in _text(browser, "action")
    assert "fallback applied" in _text(browser, "action")

    errors = [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    assert errors == [], errors
