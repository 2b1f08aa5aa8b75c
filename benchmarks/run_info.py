"""The fields every benchmark's results file starts with: its format, the run's date, mode and
command, and the machine it ran on (Python, CPUs, the load when it began)."""

from __future__ import annotations

import os
import platform
from datetime import date
from typing import Any

__all__ = ["run_header"]


def run_header(script: str, *, quick: bool) -> dict[str, Any]:
    """The opening fields of ``benchmarks/<script>``'s results, for a quick or a full run."""
    return {
        "schema": 1,
        "date": date.today().isoformat(),
        "mode": "quick" if quick else "full",
        "command": f"benchmarks/{script}" + (" --quick" if quick else ""),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "load_before": round(os.getloadavg()[0], 2),
    }
