"""The REST API (``/api/v1``): a Flask app factory, one blueprint per resource, problem+json
errors. The contract is ``api_spec/openapi.yaml``.

>>> from arena.settings import Settings
>>> app = create_app(Settings(database_url="sqlite://"))
>>> app.test_client().get("/healthz").json
{'status': 'ok'}
>>> close_app(app)
"""

from arena.api.app import close_app, create_app

__all__ = ["close_app", "create_app"]
