"""Alembic migrations of the results store, shipped in the package so any install migrates.

``Store.open`` runs them to head. An operator may also point the ``alembic`` command here:
an alembic.ini with ``script_location = saloon.worker:migrations``, then
``alembic -x url=URL upgrade head``.
"""
