"""Pure numbers over recorded matches: Elo and the whole-history fit, latency histograms and
seat statistics."""
