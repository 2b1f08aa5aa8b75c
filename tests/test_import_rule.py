"""The import rule (issue 11): one door for data, and the layering docs/ARCHITECTURE.md states.

Read from the import graph of every module under ``arena/`` and ``workers/``, parsed with
``ast`` (imports inside functions and ``TYPE_CHECKING`` blocks count, relative imports are
resolved), not by importing anything, so a lazy import cannot hide an edge. Each row of
:data:`RULES` says who may not import what, with the exceptions on either side; a failure lists
every offending edge as ``module -> imported``, one a line.

Only ``arena/services/``, ``arena/reading/queries/`` and ``arena/db/`` may import SQLAlchemy or
``arena.db.models``; everyone else holds an ``arena.db.session.Database`` as a handle and calls
a service (writes) or a query (reads).
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ARCHITECTURE = ROOT / "docs" / "ARCHITECTURE.md"

#: Libraries that do I/O or belong to an adapter: never in the pure packages.
IO_LIBRARIES = (
    "flask",
    "werkzeug",
    "sqlalchemy",
    "alembic",
    "celery",
    "kombu",
    "redis",
    "psycopg",
    "psycopg2",
    "http",
    "urllib.request",
    "socket",
    "ssl",
    "asyncio",
    "httpx",
    "requests",
    "urllib3",
    "waitress",
    "gunicorn",
)
#: The edges of the application: what a request or a command comes in through.
ENTRY_POINTS = ("arena.api", "arena.web", "arena.cli")


@dataclass(frozen=True)
class Rule:
    """Modules under ``who`` (but not under ``except_who``) may not import anything under
    ``may_not_import`` (but may import what is under ``except_imported``). Names are dotted
    module prefixes: ``arena.db`` covers ``arena.db`` and ``arena.db.models``."""

    name: str
    who: tuple[str, ...]
    may_not_import: tuple[str, ...]
    except_who: tuple[str, ...] = ()
    except_imported: tuple[str, ...] = ()


RULES = (
    Rule(
        "one-door-for-data",
        who=("arena", "workers"),
        may_not_import=("sqlalchemy", "arena.db.models"),
        except_who=("arena.services", "arena.reading.queries", "arena.db"),
    ),
    Rule(
        "cards-stand-alone",
        who=("arena.cards",),
        may_not_import=("arena",),
        except_imported=("arena.cards",),
    ),
    Rule(
        "rules-at-the-centre",
        who=("arena.rules",),
        may_not_import=("arena",),
        except_imported=("arena.rules", "arena.cards"),
    ),
    Rule(
        "planning-and-measures-are-pure",
        who=("arena.tournaments", "arena.measures"),
        may_not_import=("arena", "workers", *IO_LIBRARIES),
        except_imported=("arena.tournaments", "arena.measures", "arena.rules", "arena.cards"),
    ),
    Rule(
        "the-ladder-policy-is-pure",
        who=("arena.ladder",),
        may_not_import=("arena", "workers", *IO_LIBRARIES),
        except_imported=("arena.ladder",),
    ),
    Rule(
        "protocol-and-bots-know-no-arena-state",
        who=("arena.protocol", "arena.bots"),
        may_not_import=(
            "arena.db",
            "arena.services",
            "arena.reading",
            "workers",
            *ENTRY_POINTS,
        ),
    ),
    Rule(
        "webhook-sending-knows-no-arena-state",
        who=("arena.webhooks",),
        may_not_import=(
            "arena.db",
            "arena.services",
            "arena.reading",
            "arena.playing",
            "workers",
            *ENTRY_POINTS,
        ),
    ),
    Rule(
        "playing-serves-no-requests",
        who=("arena.playing",),
        may_not_import=ENTRY_POINTS,
    ),
    Rule(
        "services-and-reading-serve-no-requests",
        who=("arena.services", "arena.reading"),
        may_not_import=("workers", *ENTRY_POINTS),
    ),
    Rule(
        "db-is-the-bottom",
        who=("arena.db",),
        may_not_import=(
            "arena.services",
            "arena.reading",
            "arena.playing",
            "workers",
            *ENTRY_POINTS,
        ),
    ),
    Rule(
        "workers-are-thin-shells",
        who=("workers",),
        may_not_import=ENTRY_POINTS,
    ),
    Rule(
        "nothing-imports-the-cli",
        who=("arena", "workers"),
        may_not_import=("arena.cli",),
        except_who=("arena.cli",),
    ),
)


def is_under(module: str, prefixes: Iterable[str]) -> bool:
    """``module`` is one of ``prefixes`` or inside one of them."""
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def module_name(path: Path) -> str:
    """The dotted name of a source file under ROOT (a package's ``__init__`` is the package)."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(source: str, module: str, *, is_package: bool, known: set[str]) -> set[str]:
    """Every module ``source`` (the text of ``module``) imports, anywhere in the file.

    ``from x import y`` imports ``x.y`` when that is a module of the project (``known``), else
    ``x``; relative imports are resolved against ``module``'s package.
    """
    package = module if is_package else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = parts[: len(parts) - node.level + 1]
                origin = ".".join([*base, node.module] if node.module else base)
            else:
                origin = node.module or ""
            for alias in node.names:
                submodule = f"{origin}.{alias.name}"
                found.add(submodule if submodule in known else origin)
    return found


def violations(graph: Mapping[str, set[str]], rule: Rule) -> list[str]:
    """``module -> imported`` for every edge of ``graph`` that breaks ``rule``, sorted."""
    return sorted(
        f"{module} -> {imported}"
        for module, imported_set in graph.items()
        if is_under(module, rule.who) and not is_under(module, rule.except_who)
        for imported in imported_set
        if is_under(imported, rule.may_not_import) and not is_under(imported, rule.except_imported)
    )


@functools.cache
def project_graph() -> dict[str, set[str]]:
    """The import graph of every module under ``arena/`` and ``workers/``, read once."""
    paths = sorted([*ROOT.glob("arena/**/*.py"), *ROOT.glob("workers/**/*.py")])
    known = {module_name(path) for path in paths}
    return {
        module_name(path): imports_of(
            path.read_text(),
            module_name(path),
            is_package=path.name == "__init__.py",
            known=known,
        )
        for path in paths
    }


@pytest.mark.parametrize("rule", RULES, ids=[rule.name for rule in RULES])
def test_import_rule(rule: Rule) -> None:
    broken = violations(project_graph(), rule)
    assert not broken, f"{rule.name}: {len(broken)} forbidden imports\n" + "\n".join(broken)


@pytest.mark.parametrize("rule", RULES, ids=[rule.name for rule in RULES])
def test_every_rule_binds_real_modules(rule: Rule) -> None:
    # A renamed folder must not leave a rule checking nothing.
    graph = project_graph()
    assert any(is_under(module, rule.who) for module in graph), rule.who
    exempt = [p for p in rule.except_who if not any(is_under(m, (p,)) for m in graph)]
    assert not exempt, f"{rule.name}: no module under {exempt}"


def test_the_graph_sees_the_imports_it_must() -> None:
    # The reader is not blind: known edges of the real tree are in the graph.
    graph = project_graph()
    assert "arena.cards" in graph["arena.rules.hand"]
    assert any(is_under(i, ("sqlalchemy",)) for i in graph["arena.db.session"])
    assert any(is_under(m, ("arena.services",)) for m in graph)
    assert len(graph) > 50


KNOWN = {
    "arena.db",
    "arena.db.models",
    "arena.cli",
    "arena.cli.demo",
    "arena.reading",
    "arena.reading.planted",
}


@pytest.mark.parametrize(
    ("module", "is_package", "source", "expected"),
    [
        pytest.param(
            "arena.api.planted",
            False,
            "def handler():\n    from sqlalchemy.orm import Session\n    return Session\n",
            "arena.api.planted -> sqlalchemy.orm",
            id="import-inside-a-function",
        ),
        pytest.param(
            "arena.web.planted",
            False,
            "import arena.db.models as rows\n",
            "arena.web.planted -> arena.db.models",
            id="import-dotted-as",
        ),
        pytest.param(
            "arena.playing.planted",
            False,
            "from arena.db import models\n",
            "arena.playing.planted -> arena.db.models",
            id="from-package-import-module",
        ),
        pytest.param(
            "arena.reading.planted",
            False,
            "from ..db.models import BotRow\n",
            "arena.reading.planted -> arena.db.models",
            id="relative-import",
        ),
        pytest.param(
            "arena.reading",
            True,
            "from .. import cli\n",
            "arena.reading -> arena.cli",
            id="relative-import-from-a-package",
        ),
        pytest.param(
            "workers.planted",
            False,
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import sqlalchemy\n",
            "workers.planted -> sqlalchemy",
            id="type-checking-import",
        ),
    ],
)
def test_the_checker_catches_a_planted_violation(
    module: str, is_package: bool, source: str, expected: str
) -> None:
    graph = {module: imports_of(source, module, is_package=is_package, known=KNOWN)}
    found = [line for rule in RULES for line in violations(graph, rule)]
    assert expected in found, found


def test_the_checker_leaves_the_doors_themselves_alone() -> None:
    sources = {
        "arena.services.planted": "from sqlalchemy import select\nfrom arena.db import models\n",
        "arena.reading.queries.planted": "import sqlalchemy.orm\n",
        "arena.db.planted": "from arena.db.models import BotRow\n",
        "arena.api.planted": "from arena.db.session import Database\nfrom arena.db import errors\n",
        "arena.cli.planted": "from arena.cli import demo\n",
        "arena.rules.planted": "from arena.cards import Card\nfrom arena.rules import hand\n",
    }
    graph = {
        module: imports_of(source, module, is_package=False, known=KNOWN)
        for module, source in sources.items()
    }
    assert [line for rule in RULES for line in violations(graph, rule)] == []


def test_the_architecture_names_every_rule_and_its_guard() -> None:
    text = ARCHITECTURE.read_text()
    assert "tests/test_import_rule.py" in text
    missing = [rule.name for rule in RULES if f"`{rule.name}`" not in text]
    assert not missing, f"docs/ARCHITECTURE.md does not state {missing}"
