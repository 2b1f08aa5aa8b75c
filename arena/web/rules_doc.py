"""The rules document (``docs/RULES.md``) as the ``/rules`` page.

``docs/RULES.md`` is the one source, the file a reader of the repository opens. The package
reads it as ``arena/web/RULES.md``: in the repository a symlink to it, which building a wheel
turns into a copy (package data), so that an installed arena serves it too
(``tests/web/test_rules_page.py`` checks the page is the document). The markdown is rendered
with markdown-it (CommonMark and tables; raw HTML in the document is shown as text, never
passed through), and each heading gets the ``id`` GitHub would give it, so that links to a
section (``/rules#a-game``, or ``#a-game`` inside the document) work on the page too.

>>> html = render_markdown("# Rules\\n\\n## Knock and gin\\n\\nA <b>bold</b> claim.")
>>> print(html.strip())
<h1 id="rules">Rules</h1>
<h2 id="knock-and-gin">Knock and gin</h2>
<p>A &lt;b&gt;bold&lt;/b&gt; claim.</p>
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from importlib import resources

from markdown_it import MarkdownIt

__all__ = ["RULES_RESOURCE", "RulesDocument", "load_rules", "render_markdown", "slug"]

#: The packaged copy of ``docs/RULES.md``, inside :mod:`arena.web`.
RULES_RESOURCE = "RULES.md"


@dataclass(frozen=True, slots=True)
class RulesDocument:
    """The document's markdown, its first heading (the page title) and its HTML."""

    markdown: str
    title: str
    html: str


def slug(text: str) -> str:
    """A heading's anchor, as GitHub makes it (so that a link like ``[A game](#a-game)`` in the
    document works on GitHub and on the page alike): lower case, punctuation dropped, each
    space a ``-``.

    >>> slug("Bots' faults are not rules events")
    'bots-faults-are-not-rules-events'
    >>> slug("A deal (one hand)"), slug("Knock / gin")
    ('a-deal-one-hand', 'knock--gin')
    """
    plain = re.sub(r"[^\w\- ]", "", text.strip().lower())
    return plain.replace(" ", "-") or "section"


def _parser() -> MarkdownIt:
    return MarkdownIt("commonmark", {"html": False, "typographer": False}).enable("table")


def render_markdown(text: str) -> str:
    """``text`` as HTML, with an ``id`` on every heading (unique within the document)."""
    md = _parser()
    tokens = md.parse(text)
    seen: dict[str, int] = {}
    for i, token in enumerate(tokens):
        if token.type == "heading_open" and i + 1 < len(tokens):
            base = slug(tokens[i + 1].content)
            count = seen.get(base, 0)
            seen[base] = count + 1
            token.attrSet("id", base if count == 0 else f"{base}-{count}")
    html: str = md.renderer.render(tokens, md.options, {})
    return html


def _title(text: str) -> str:
    for line in text.splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return "Rules"


@cache
def load_rules() -> RulesDocument:
    """The packaged rules document, rendered once per process (FileNotFoundError if the
    package was built without it)."""
    text = resources.files("arena.web").joinpath(RULES_RESOURCE).read_text(encoding="utf-8")
    return RulesDocument(text, _title(text), render_markdown(text))
