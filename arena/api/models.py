"""Request bodies as msgspec structs: the machine form of the request schemas of
``api_spec/openapi.yaml`` (``tests/api/test_api_spec.py`` proves the two agree).

:func:`decode_body` parses and validates a request body into one of these or raises a
problem: 415 for a body that is not JSON, 400 for malformed JSON, 422 naming the offending
field for a body that breaks the schema.

>>> import msgspec
>>> msgspec.json.decode(b'{"name": "x", "url": "http://b", "owner": "me"}', type=BotCreate).name
'x'
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal, TypeVar

import msgspec
from flask import request
from msgspec import UNSET, Meta, Struct, UnsetType

from arena.api.problems import FieldError, ProblemError, unprocessable

__all__ = [
    "MAX_ID",
    "BotCreate",
    "BotUpdate",
    "ChallengeCreate",
    "RulesSpec",
    "TestCreate",
    "TournamentCreate",
    "WebhookCreate",
    "decode_body",
    "field_path",
]

BotName = Annotated[str, Meta(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")]
BotUrl = Annotated[str, Meta(min_length=1, max_length=2048)]
Owner = Annotated[str, Meta(min_length=1, max_length=200)]
#: Database ids are 32-bit integers on every backend.
MAX_ID = 2**31 - 1
BotId = Annotated[int, Meta(ge=1, le=MAX_ID)]
Preset = Literal["standard", "oklahoma", "straight"]
FormatName = Literal[
    "round_robin",
    "double_round_robin",
    "single_elimination",
    "double_elimination",
    "swiss",
    "gauntlet",
]


class BotCreate(Struct, forbid_unknown_fields=True):
    """Register a bot: its unique name, its URL, how to reach its owner and, optionally, the
    signing secret the owner chose (checked by the view: 400 unless ``whsec_`` + base64 of 24
    to 64 bytes)."""

    name: BotName
    url: BotUrl
    owner: Owner
    secret: Annotated[str, Meta(max_length=200)] | UnsetType = UNSET


class BotUpdate(Struct, forbid_unknown_fields=True):
    """Change a bot's name or URL (the URL is checked again)."""

    name: BotName | UnsetType = UNSET
    url: BotUrl | UnsetType = UNSET


class RulesSpec(Struct, forbid_unknown_fields=True):
    """A rule set: a preset and fields overriding it (any ``RuleSet`` field)."""

    preset: Preset = "standard"
    fields: dict[str, Any] = {}


class TournamentCreate(Struct, forbid_unknown_fields=True):
    """A tournament: format and options, participants, rules, seed, rated."""

    name: Annotated[str, Meta(min_length=1, max_length=200)]
    format: FormatName
    options: dict[str, Any] = {}
    participants: (
        Annotated[list[BotId], Meta(min_length=2, max_length=1024)] | Literal["all_active"]
    ) = "all_active"
    rules: RulesSpec = msgspec.field(default_factory=RulesSpec)
    seed: Annotated[int, Meta(ge=0, le=2**62)] | None = None
    rated: bool = True


class ChallengeCreate(Struct, forbid_unknown_fields=True):
    """An owner's bot challenges another bot to one match."""

    bot_id: BotId
    opponent_id: BotId
    rated: bool = False
    rules: RulesSpec | None = None


class TestCreate(Struct, forbid_unknown_fields=True):
    """An SPRT test: a candidate and a baseline (one bot twice is the null test), each at its
    bot's current version (naming another version is a 422), the hypotheses in logistic Elo of
    the match score, the error rates, the cap on pairs, the pairs in flight, the rules and the
    seed that decides every pair's deals (default: drawn by the arena)."""

    __test__ = False  # not a pytest class

    candidate_id: BotId
    baseline_id: BotId
    elo0: Annotated[float, Meta(ge=-1000, le=1000)]
    elo1: Annotated[float, Meta(ge=-1000, le=1000)]
    candidate_version: Annotated[int, Meta(ge=1, le=MAX_ID)] | None = None
    baseline_version: Annotated[int, Meta(ge=1, le=MAX_ID)] | None = None
    alpha: Annotated[float, Meta(gt=0, lt=0.5)] = 0.05
    beta: Annotated[float, Meta(gt=0, lt=0.5)] = 0.05
    max_pairs: Annotated[int, Meta(ge=1, le=5000)] = 1000
    concurrency: Annotated[int, Meta(ge=1, le=8)] = 2
    rules: RulesSpec | None = None
    seed: Annotated[int, Meta(ge=0, le=2**62 - 1)] | None = None


class WebhookCreate(Struct, forbid_unknown_fields=True):
    """A webhook endpoint for a bot: the URL to POST events to (checked as a bot URL is) and
    the event types it wants (names of ``arena.events.EventType``; an unknown one is a 422)."""

    url: BotUrl
    event_types: Annotated[
        list[Annotated[str, Meta(min_length=1, max_length=64)]], Meta(min_length=1, max_length=16)
    ]


T = TypeVar("T")

_AT = re.compile(r"^(?P<message>.*?)(?: - at `\$(?P<path>[^`]*)`)?$", re.DOTALL)


def field_path(path: str) -> str:
    """msgspec's ``$.rules.fields`` / ``$.participants[2]`` as ``rules.fields`` /
    ``participants[2]``.

    >>> field_path(".participants[2]"), field_path("")
    ('participants[2]', '(body)')
    """
    return path.lstrip(".") or "(body)"


def decode_body(model: type[T]) -> T:
    """The request's JSON body as ``model`` (see the module docstring for the errors)."""
    mimetype = request.mimetype
    if mimetype != "application/json" and not mimetype.endswith("+json"):
        raise ProblemError(
            415,
            f"the body must be application/json, not {mimetype or 'missing'}",
            kind="unsupported-media-type",
        )
    data = request.get_data(cache=True)
    try:
        return msgspec.json.decode(data, type=model)
    except msgspec.ValidationError as exc:
        match = _AT.match(str(exc))
        assert match is not None
        message, path = match["message"], field_path(match["path"] or "")
        raise unprocessable(
            f"the body does not match the schema: {path}: {message}",
            [FieldError(path, message)],
        ) from None
    except msgspec.DecodeError as exc:
        detail = f"the body is not valid JSON: {exc}"
        raise ProblemError(400, detail, kind="malformed-json") from None
