"""Alembic revisions of the results store, oldest first (0001_initial, ...)."""
