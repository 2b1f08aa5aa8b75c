"""Live streams (issue 13): every step of a running match, and the outbox's events, to clients.

* :mod:`arena.live.publish`: the match job's side: raw events (internal: they carry the deck)
  into a :class:`~arena.live.publish.LiveSink`;
* :mod:`arena.live.redis_bus`: the sink and the source when Celery runs (Redis pub/sub, with
  each attempt's events so far in a Redis list for late joiners);
* :mod:`arena.live.hub`: the serving process's side: raw events in, per-match feeds of frames
  (:mod:`arena.live.feed`), waiting subscribers woken;
* :mod:`arena.live.views`: the embargo of each view (public, a seat, a duplicate leg's);
* :mod:`arena.live.sse`: the ``text/event-stream`` wire form;
* :mod:`arena.live.outbox`: the tournament and ladder streams, tailing the ``events`` table.
"""
