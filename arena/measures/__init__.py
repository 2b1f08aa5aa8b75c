"""Pure numbers over recorded matches: Elo and the whole-history fit, latency histograms and
seat statistics; and the health state machine over a bot's probes (``health.py``)."""
