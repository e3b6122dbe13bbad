"""Throwaway databases for store tests: a PostgreSQL schema of one's own, dropped after.

Several helpers share the machine's PostgreSQL, so every test module works in a uniquely
named schema; the URL it gets sets ``search_path`` to that schema only, so the store's
unqualified tables (and Alembic's version table) land there.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager

from tests import services


def schema_url(base_url: str, schema: str) -> str:
    """``base_url`` with every connection's search_path set to ``schema``."""
    sep = "&" if "?" in base_url else "?"
    return f"{base_url}{sep}options=-csearch_path%3D{schema}"


@contextmanager
def postgres_schema(prefix: str = "t") -> Iterator[str]:
    """A fresh PostgreSQL schema (requires the service); yields its URL, drops it after."""
    import sqlalchemy as sa

    services.require("postgres")
    schema = f"{prefix}_{uuid.uuid4().hex[:12]}"
    admin = sa.create_engine(services.POSTGRES_URL)
    try:
        with admin.begin() as conn:
            conn.execute(sa.text(f'CREATE SCHEMA "{schema}"'))
        yield schema_url(services.POSTGRES_URL, schema)
    finally:
        with admin.begin() as conn:
            conn.execute(sa.text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
        admin.dispose()
