"""The API's blueprints, one per resource, all under ``/api/v1`` (operations at the root)."""
