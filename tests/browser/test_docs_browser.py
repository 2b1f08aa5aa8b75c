"""The API docs in a real headless Chromium: "Try it out" on ``GET /api/v1/bots`` sends its
request to the server the docs page came from (waitress on a random port, never the 8000 an
absolute server URL in the description would name), and gets that server's answer.

Needs Debian's ``chromium`` and ``chromedriver``, like the replay viewer's browser test (whose
fixtures this reuses); without them it skips with one loud line, except under ``CI=true``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from live_api import sqlite_copy, waitress_serving
from test_replay_browser import WAIT_S, _require_browser, browser  # noqa: F401 - a fixture

from arena.db.session import Database
from arena.services.bots import register_bot

pytestmark = pytest.mark.browser


@pytest.fixture
def docs_server(sqlite_template: Path, tmp_path: Path) -> Iterator[str]:
    """The real server (waitress) on a free loopback port, with one registered bot."""
    _require_browser()
    url = sqlite_copy(sqlite_template, tmp_path)
    db = Database(url)
    register_bot(db, name="docs-bot", owner="ada@example.com", url="http://127.0.0.1:9")
    db.dispose()
    with waitress_serving(url) as base:
        yield base


def test_try_it_out_calls_the_server_the_docs_came_from(
    docs_server: str,
    browser: Any,  # noqa: F811 - the fixture imported above
) -> None:
    from selenium.webdriver.common.by import By  # noqa: PLC0415
    from selenium.webdriver.support import expected_conditions as ec  # noqa: PLC0415
    from selenium.webdriver.support.ui import WebDriverWait  # noqa: PLC0415

    assert not docs_server.endswith(":8000")
    wait = WebDriverWait(browser, WAIT_S * 3)
    browser.get(docs_server + "/api/v1/docs/")
    operation = wait.until(ec.presence_of_element_located((By.ID, "operations-bots-listBots")))
    operation.find_element(By.CSS_SELECTOR, ".opblock-summary").click()
    wait.until(
        ec.element_to_be_clickable((By.CSS_SELECTOR, "#operations-bots-listBots .try-out__btn"))
    ).click()
    wait.until(
        ec.element_to_be_clickable((By.CSS_SELECTOR, "#operations-bots-listBots .execute"))
    ).click()
    request_url = wait.until(
        ec.visibility_of_element_located(
            (By.CSS_SELECTOR, "#operations-bots-listBots .request-url pre")
        )
    )
    assert request_url.text.startswith(docs_server + "/api/v1/bots"), request_url.text
    status = wait.until(
        ec.visibility_of_element_located(
            (
                By.CSS_SELECTOR,
                "#operations-bots-listBots .live-responses-table tbody .response-col_status",
            )
        )
    )
    assert status.text.strip().startswith("200"), status.text
    body = browser.find_element(
        By.CSS_SELECTOR,
        "#operations-bots-listBots .live-responses-table tbody .response-col_description",
    )
    assert "docs-bot" in body.text
