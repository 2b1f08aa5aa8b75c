"""``/rules`` is ``docs/RULES.md``, rendered: the page shows exactly the document (so the two
cannot drift), the package carries the document (an installed arena serves it too), and every
page links to it from the navigation."""

from __future__ import annotations

import re
import tomllib
from importlib import resources
from pathlib import Path

from flask.testing import FlaskClient
from web_data import make_app

from arena.db.session import Database
from arena.web.rules_doc import load_rules, render_markdown, slug

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "docs" / "RULES.md"
ARTICLE = re.compile(r'<article class="prose rules-doc">\n(.*)\n</article>', re.S)
HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$", re.M)


def _client(db: Database) -> FlaskClient:
    return make_app(db).test_client()


def test_the_rules_page_is_the_document_rendered(db: Database) -> None:
    response = _client(db).get("/rules")
    assert response.status_code == 200 and response.mimetype == "text/html"
    page = response.get_data(as_text=True)
    found = ARTICLE.search(page)
    assert found, "the page wraps the document in its article"
    text = RULES.read_text(encoding="utf-8")
    assert found.group(1) == render_markdown(text)
    headings = HEADING.findall(text)
    assert headings, "the document has headings"
    for level, title in headings:
        assert re.search(rf'<h{len(level)} id="{re.escape(slug(title))}(?:-\d+)?">', page), title
    title = headings[0][1]
    assert f"<title>{title} · gin-arena</title>" in page


def test_the_package_carries_the_document_itself() -> None:
    """``arena/web/RULES.md`` is what an installed package serves: it must be the document."""
    packaged = resources.files("arena.web").joinpath("RULES.md").read_text(encoding="utf-8")
    assert packaged == RULES.read_text(encoding="utf-8")
    assert load_rules().markdown == packaged
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "web/RULES.md" in pyproject["tool"]["setuptools"]["package-data"]["arena"]
    assert any(d.startswith("markdown-it-py>=") for d in pyproject["project"]["dependencies"])


def test_a_package_built_without_the_document_says_so(db: Database, monkeypatch) -> None:
    """A build context without ``docs/`` leaves ``arena/web/RULES.md`` a dangling symlink,
    which the wheel skips: the page is then a plain 404, not a failure."""
    monkeypatch.setattr("arena.web.rules_doc.RULES_RESOURCE", "NOT-THERE.md")
    load_rules.cache_clear()
    try:
        response = _client(db).get("/rules")
    finally:
        load_rules.cache_clear()
    assert response.status_code == 404
    assert "not installed with this package" in response.get_data(as_text=True)


def test_every_page_links_to_the_rules(db: Database) -> None:
    client = _client(db)
    for path in ("/", "/matches", "/tournaments", "/rules"):
        page = client.get(path).get_data(as_text=True)
        nav = page[page.index("<nav>") : page.index("</nav>")]
        assert '<a href="/rules"' in nav, path
    current = client.get("/rules").get_data(as_text=True)
    assert '<a href="/rules" aria-current="page">Rules</a>' in current


def test_every_link_to_a_section_of_the_document_lands_on_a_heading(db: Database) -> None:
    page = _client(db).get("/rules").get_data(as_text=True)
    ids = set(re.findall(r'<h\d id="([^"]+)"', page))
    links = re.findall(r'href="#([^"]+)"', page)
    assert all(link in ids for link in links), sorted(set(links) - ids)


def test_markup_in_the_document_is_shown_not_run() -> None:
    html = render_markdown("# T\n\n<script>alert(1)</script>\n\n| a | b |\n|---|---|\n| 1 | 2 |\n")
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert "<table>" in html and "<td>1</td>" in html
