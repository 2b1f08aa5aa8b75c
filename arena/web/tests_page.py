"""The SPRT tests' pages: ``/tests`` (newest first) and ``/tests/{id}``, a test's report with
the LLR after each pair drawn as a server-rendered SVG chart between its two bounds; a running
test's page reloads itself every few seconds. The test's seed shows once the test is over
(:func:`arena.reading.embargo.redact_sprt_test`).

Registered on the pages' blueprint (:data:`arena.web.pages.bp`) when :mod:`arena.web` is
imported. Reads through :mod:`arena.reading.queries.sprt_tests` only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from flask import abort, render_template, request
from markupsafe import Markup, escape

from arena.reading.embargo import redact_sprt_test
from arena.reading.queries import sprt_tests as test_queries
from arena.web.context import database
from arena.web.pages import bp

__all__ = ["TEST_REFRESH_SECONDS", "llr_chart", "sprt_test_page", "sprt_tests_page"]

#: How often a running test's page reloads itself.
TEST_REFRESH_SECONDS: Final = 5
TESTS_SHOWN: Final = 100


def llr_chart(
    path: Sequence[float], lower: float, upper: float, width: int = 640, height: int = 200
) -> Markup:
    """The LLR after each pair as an SVG line, with the bounds as dashed lines and zero.

    >>> "polyline" in llr_chart([0.5, 1.0, 3.1], -2.94, 2.94)
    True
    >>> "No pairs" in llr_chart([], -2.94, 2.94)
    True
    """
    if not path:
        return Markup('<p class="muted">No pairs finished yet.</p>')
    lo = min(lower, *path) - 0.2
    hi = max(upper, *path) + 0.2
    pad = 8
    step = (width - 2 * pad) / max(1, len(path))

    def y(value: float) -> float:
        return round(pad + (hi - value) / (hi - lo) * (height - 2 * pad), 1)

    points = [(float(pad), y(0.0))] + [
        (round(pad + (i + 1) * step, 1), y(v)) for i, v in enumerate(path)
    ]
    line = " ".join(f"{px},{py}" for px, py in points)
    label = (
        f"LLR over {len(path)} pairs, from 0 to {path[-1]:+.2f};"
        f" bounds {lower:+.2f} and {upper:+.2f}"
    )
    rules = "".join(
        f'<line x1="{pad}" x2="{width - pad}" y1="{y(v)}" y2="{y(v)}" class="{cls}"/>'
        f'<text x="{width - pad}" y="{y(v) - 3}" text-anchor="end" class="chart-label">'
        f"{escape(text)}</text>"
        for v, cls, text in (
            (upper, "bound", f"H1 {upper:+.2f}"),
            (0.0, "zero", "0"),
            (lower, "bound", f"H0 {lower:+.2f}"),
        )
    )
    last_x, last_y = points[-1]
    return Markup(
        f'<svg class="llr-chart" viewBox="0 0 {width} {height}" width="100%" '
        f'preserveAspectRatio="none" role="img" aria-label="{escape(label)}">'
        f"<title>{escape(label)}</title>{rules}"
        f'<polyline points="{line}" fill="none" stroke="currentColor" stroke-width="1.8" '
        f'stroke-linejoin="round" vector-effect="non-scaling-stroke"/>'
        f'<circle cx="{last_x}" cy="{last_y}" r="3"/>'
        f"</svg>"
    )


@bp.get("/tests")
def sprt_tests_page() -> str:
    status = request.args.get("status") or None
    if status is not None and status not in ("running", "finished"):
        abort(400, description="status must be running or finished.")
    rows = test_queries.sprt_test_list(database(), status=status, limit=TESTS_SHOWN)
    return render_template("web/tests.html", tests=rows, status=status)


@bp.get("/tests/<id('test'):test_id>")
def sprt_test_page(test_id: int) -> str:
    report = redact_sprt_test(test_queries.sprt_test_detail(database(), test_id))
    bounds = report["bounds"]
    return render_template(
        "web/test.html",
        test=report,
        chart=llr_chart(report["llr_history"], bounds["lower"], bounds["upper"]),
        refresh=TEST_REFRESH_SECONDS if report["status"] == "running" else None,
    )
