"""deploy/ stays exactly consistent with the code: every compose command is a real `gin-arena`
sub-command, every ARENA_* variable a Settings field and vice versa, the image runs as non-root
and installs what `gin-arena db upgrade` needs. (Docker cannot run here; this is the check.)
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml

from arena.cli import build_parser
from arena.settings import Settings, load_settings

ROOT = Path(__file__).resolve().parent.parent
DEPLOY = ROOT / "deploy"
FIELDS = {f"ARENA_{name.upper()}" for name in Settings.__struct_fields__}


def compose() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    return data


def arena_services() -> dict[str, dict[str, Any]]:
    """Services that run the gin-arena image."""
    return {
        name: svc
        for name, svc in compose()["services"].items()
        if svc.get("image", "").startswith("gin-arena") or "build" in svc
    }


def env_example() -> dict[str, str]:
    out = {}
    for raw in (DEPLOY / "env.example").read_text().splitlines():
        line = raw.strip()
        if line and not line.startswith("#"):
            key, sep, value = line.partition("=")
            assert sep, f"env.example: not KEY=VALUE: {line!r}"
            out[key] = value
    return out


def subcommands(parser: Any) -> dict[str, Any]:
    actions = [a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction"]
    return dict(actions[0].choices) if actions else {}


def test_the_arena_services_are_the_expected_roles() -> None:
    services = compose()["services"]
    assert set(services) == {"api", "worker", "beat", "migrate", "redis", "postgres"}
    assert set(arena_services()) == {"api", "worker", "beat", "migrate"}
    assert services["beat"]["deploy"]["replicas"] == 1


@pytest.mark.parametrize("service", ["api", "worker", "beat", "migrate"])
def test_every_compose_command_is_a_gin_arena_subcommand(service: str) -> None:
    command = arena_services()[service]["command"]
    assert isinstance(command, list) and command[0] == "gin-arena", command
    parser = build_parser()
    if command[1] not in subcommands(parser):
        pytest.fail(f"{service}: `gin-arena {command[1]}` is not a sub-command")
    try:
        args = parser.parse_args(command[1:])
    except SystemExit:
        pytest.fail(f"{service}: `{' '.join(command)}` does not parse")
    assert callable(args.func)


def test_worker_and_beat_commands_match_the_cli() -> None:
    services = arena_services()
    parser = build_parser()
    worker = parser.parse_args(services["worker"]["command"][1:])
    beat = parser.parse_args(services["beat"]["command"][1:])
    assert worker.func is beat.func  # both `gin-arena worker`
    assert not worker.beat and beat.beat
    assert worker.queues == "celery,control" and beat.queues == "control"
    migrate = parser.parse_args(services["migrate"]["command"][1:])
    assert (migrate.command, migrate.db_command) == ("db", "upgrade")


def test_env_example_lists_every_setting_and_nothing_else() -> None:
    keys = set(env_example())
    assert keys - FIELDS == set(), "env.example has variables Settings does not read"
    assert FIELDS - keys == set(), "Settings fields missing from env.example"


def test_env_example_values_are_valid_settings() -> None:
    settings = load_settings(env_example())
    assert settings.executor_kind == "celery"
    # A killed worker's redelivered task must find its lease expired.
    assert settings.task_time_limit + settings.lease_seconds < settings.visibility_timeout


def test_compose_sets_only_real_settings() -> None:
    for name, svc in arena_services().items():
        env = svc.get("environment", {})
        keys = set(env) if isinstance(env, dict) else {e.partition("=")[0] for e in env}
        arena = {k for k in keys if k.startswith("ARENA_")}
        assert arena <= FIELDS, f"{name}: {arena - FIELDS} are not settings"
        assert {"ARENA_DATABASE_URL", "ARENA_BROKER_URL"} <= arena, name


def test_every_setting_in_the_readme_exists() -> None:
    text = (DEPLOY / "README.md").read_text() + (DEPLOY / "compose.yaml").read_text()
    named = set(re.findall(r"ARENA_[A-Z_]+", text))
    assert named <= FIELDS, named - FIELDS


def test_dockerfile_is_slim_non_root_and_installs_the_package() -> None:
    text = (DEPLOY / "Dockerfile").read_text()
    assert re.search(r"^FROM python:3\.11-slim\b", text, re.M)
    assert re.search(r"^RUN pip install \.", text, re.M)
    users = re.findall(r"^USER (\S+)", text, re.M)
    assert users and users[-1] not in ("root", "0")


def test_the_package_ships_the_migrations_and_its_dependencies() -> None:
    """`pip install .` (the image) must carry Alembic's env.py and versions, and the drivers
    the compose services use, or `gin-arena db upgrade` and the workers cannot start."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    deps = " ".join(project["project"]["dependencies"]).lower()
    missing = [d for d in ("sqlalchemy", "alembic", "celery", "redis", "psycopg") if d not in deps]
    assert missing == [], f"pyproject dependencies lack {missing}"
    setuptools = project["tool"]["setuptools"]
    data = " ".join(setuptools.get("package-data", {}).get("arena", []))
    migrations = ROOT / "arena" / "db" / "migrations"
    is_package = (migrations / "__init__.py").exists()
    assert is_package or ("migrations" in data), (
        "arena/db/migrations is neither a package nor package data: a non-editable install "
        "has no env.py or versions/"
    )


def test_the_image_copies_what_the_package_symlinks_point_to() -> None:
    """The package keeps single sources by symlink (the OpenAPI description, the rules); an
    image that copies only `arena/` would ship dangling links and serve 404s."""
    text = (DEPLOY / "Dockerfile").read_text()
    ignore = (DEPLOY / "Dockerfile.dockerignore").read_text().split()
    copied = set(re.findall(r"^COPY (\S+) ", text, re.M))
    links = [p for p in (ROOT / "arena").rglob("*") if p.is_symlink()]
    assert links, "expected the package's symlinked sources"
    for link in links:
        target = link.resolve().relative_to(ROOT).as_posix()
        assert target in copied, f"{link.relative_to(ROOT)} -> {target}: not copied"
        assert f"!{target}" in ignore, f"{target} is not let into the build context"
