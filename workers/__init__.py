"""Celery workers: the app and its tasks, thin shells over functions of the arena package."""
