"""Who may read a bot's owner contact and URL, and the name everyone else sees instead.

A bot's ``owner`` is how to reach its owner (an e-mail address, say) and its ``url`` where it
runs: both are for the bot's owner (its owner token) and the organiser (``ARENA_ADMIN_TOKEN``)
only. Everyone else, on the API and on the pages, sees ``owner`` and ``url`` as ``null`` and
the owner's public name, :func:`owner_name`, derived from the contact (never stored apart, so
it follows every change of the contact).

>>> owner_name("Ada Lovelace <ada@example.com>")
'Ada Lovelace'
>>> owner_name("ada@example.com")
'ada'
>>> owner_name("Team Rocket")
'Team Rocket'
"""

from __future__ import annotations

import re
from typing import Any

from arena.api.auth import Principal

__all__ = ["may_read_contact", "owner_name", "with_owner_view"]

#: An e-mail address, or anything in angle brackets (``Name <contact>``).
_ADDRESS = re.compile(r"<[^>]*>|(?:mailto:)?[^\s<>(),;:\"']*@[^\s<>(),;:\"']+", re.IGNORECASE)
#: The public name of a contact that names nobody (blank, or an address with nothing before ``@``).
UNNAMED = "(unnamed)"
#: What may surround a name once its addresses are gone (``Ada (ada@example.com)``).
_SURROUNDS = " \t\"'()<>,;:-"


def owner_name(contact: str) -> str:
    """The public name of an owner contact: the contact with its e-mail addresses (and
    anything in ``<...>``) taken out, when a name is left (``Ada Lovelace <ada@example.com>``,
    ``Ada (ada@example.com)``); else the part of the first address before ``@``; a contact
    without an address is a name already and is shown as given.

    >>> owner_name("ada@example.com, bob@example.org")
    'ada'
    >>> owner_name('"Ada L." (ada@example.com)')
    'Ada L.'
    >>> owner_name("<ada@example.com>"), owner_name("@example.com"), owner_name("  ")
    ('ada', '(unnamed)', '(unnamed)')
    """
    addresses = _ADDRESS.findall(contact)
    if not addresses:
        return contact.strip() or UNNAMED
    rest = re.sub(r"\s+", " ", _ADDRESS.sub(" ", contact)).strip(_SURROUNDS)
    if any(ch.isalnum() for ch in rest):
        return rest
    first = re.sub(r"^mailto:", "", addresses[0].strip("<>").strip(), flags=re.IGNORECASE)
    local = first.split("@", 1)[0].strip(_SURROUNDS)
    return local or UNNAMED


def may_read_contact(principal: Principal, bot_id: int) -> bool:
    """Whether this caller may read bot ``bot_id``'s owner contact and URL."""
    return principal.owns(bot_id) or principal.is_organiser


def with_owner_view(detail: dict[str, Any], principal: Principal) -> dict[str, Any]:
    """A bot's detail (:func:`arena.reading.queries.bots.bot_detail`) as ``principal`` may see
    it: with ``owner_name`` always, and ``owner`` and ``url`` only for its owner and the
    organiser."""
    contact = str(detail["owner"])
    shown = {**detail, "owner_name": owner_name(contact)}
    if not may_read_contact(principal, int(detail["id"])):
        shown["owner"] = None
        shown["url"] = None
    return shown
