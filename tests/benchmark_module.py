"""Importing a benchmark script (``benchmarks/<name>.py``) as a module, for tests of its parts.

As when it runs as a script: its folder is on ``sys.path`` (the benchmarks share ``pools``,
``run_info`` ...), and the module is in ``sys.modules`` under its name while it executes
(its dataclasses look their module up there).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


def load_benchmark(name: str) -> ModuleType:
    """``benchmarks/<name>.py``, executed as the module ``name``."""
    if str(BENCHMARKS) not in sys.path:
        sys.path.append(str(BENCHMARKS))
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module
