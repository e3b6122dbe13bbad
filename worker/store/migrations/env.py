"""Alembic environment: migrate the connection Store.open hands over (or ``-x url=...``)."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import context

from saloon.worker.store.schema import metadata


def run() -> None:
    """Run the pending revisions on the given connection, inside its transaction."""
    config = context.config
    connection = config.attributes.get("connection")
    if connection is not None:
        _migrate(connection)
        return
    # Run by the alembic command line: a URL from -x url=... (no alembic.ini needed).
    url = context.get_x_argument(as_dictionary=True).get("url")
    if not url:
        raise SystemExit(
            "give the store's URL: alembic -x url=postgresql+psycopg://... upgrade head"
        )
    engine = sa.create_engine(url)
    try:
        with engine.begin() as conn:
            _migrate(conn)
    finally:
        engine.dispose()


def _migrate(connection: sa.Connection) -> None:
    # render_as_batch: SQLite alters a table by copying it; later revisions need that.
    context.configure(connection=connection, target_metadata=metadata, render_as_batch=True)
    with context.begin_transaction():
        context.run_migrations()


run()
