"""The read door: every read of what the arena shows or looks up, one module per resource.

* :mod:`~arena.reading.queries.bots`: the leaderboard, the unrated, bot lists and details,
  rating histories, whose owner token a token is;
* :mod:`~arena.reading.queries.matches`: match lists and details, what the embargo reads;
* :mod:`~arena.reading.queries.tournaments`: tournament lists, details, brackets, standings
  and progress; :mod:`~arena.reading.queries.versions`: a tournament's fingerprint;
* :mod:`~arena.reading.queries.bot_versions`: a bot's versions, their ratings and live Elo,
  and the version each side of a match played;
* :mod:`~arena.reading.queries.records`: a finished match's stored record, as rows;
* :mod:`~arena.reading.queries.health`: a bot's health state and probe history;
* :mod:`~arena.reading.queries.webhooks`: a bot's webhook endpoints and their delivery logs;
* :mod:`~arena.reading.queries.lookup`: bots given by name or id on the command line;
* :mod:`~arena.reading.queries.operations`: readiness and the metrics' counts.

Callers import the module of the resource they read (``from arena.reading.queries import
matches as match_queries``). Nothing here writes; what the API and the pages show comes as
JSON-ready dicts. Every list is ordered by a unique key and paginated by keyset (``before`` an
id), so pages are stable while matches are added and no query's cost grows with the number of
stored matches beyond an index lookup. What is asked for by id and does not exist raises
:class:`arena.errors.NotFoundError`, which the API answers with a 404 problem and the pages with
their 404 page, each in one place.
"""
