"""The sending side of the owners' webhooks, with no database: what a delivery looks like on
the wire, when a failed one is tried again, and the HTTP exchange itself.

* :mod:`.payload`: the body ``{"type", "timestamp", "data"}``, encoded by the arena and decoded
  by the SDK's receiver (:mod:`arena.bots.webhooks`), one form for both;
* :mod:`.schedule`: the retry schedule (exponential backoff within a window after the event),
  pure arithmetic on explicit times;
* :mod:`.sender`: one signed ``POST`` to an owner's URL, through the URL guard at connect time,
  within a deadline, no redirect followed; an :class:`~.sender.Outcome`, never an exception.

The write side (claiming due deliveries, recording attempts, disabling endpoints) is
:mod:`arena.services.webhooks`; this package knows nothing of the arena's state.
"""
