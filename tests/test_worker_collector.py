"""A worker's garbage collector: tuned once the worker is ready, for the matches it holds."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest
from celery import signals

import workers.celery_app  # noqa: F401 - connects the worker_ready receivers
from workers.collector import WORKER_THRESHOLDS


@pytest.fixture
def collector_restored() -> Iterator[None]:
    """The test process's collector as it was, after the test."""
    thresholds = gc.get_threshold()
    yield
    gc.unfreeze()
    gc.set_threshold(*thresholds)


@pytest.mark.usefixtures("collector_restored")
def test_a_ready_worker_freezes_its_start_up_objects_and_raises_the_thresholds() -> None:
    """Start-up's objects go to the permanent generation (no collection scans them again) and
    a young collection waits for 20,000 net new objects, not 700: the full collections that
    stopped every match of a loaded worker for up to 224 ms each all but vanish."""
    gc.unfreeze()
    gc.set_threshold(700, 10, 10)
    assert gc.get_freeze_count() == 0
    signals.worker_ready.send(sender=None)
    assert gc.get_threshold() == WORKER_THRESHOLDS
    assert gc.get_freeze_count() > 10_000  # the modules and objects this process imported
    assert WORKER_THRESHOLDS[0] > 700 and WORKER_THRESHOLDS[1:] >= (10, 10)
