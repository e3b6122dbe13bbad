"""The results store: one SQL database (a SQLite file by default, PostgreSQL by URL).

:mod:`~saloon.worker.store.store` is the store itself (results written once per match id,
seasons, schedules, bots and their versions) and its public API for the layers above
(docs/store.md), :mod:`~saloon.worker.store.rows` the rows it returns,
:mod:`~saloon.worker.store.schema` its tables, :mod:`~saloon.worker.store.engine` the
engines, the migrations (``migrations/``, Alembic) and the one mapping of a lost database
to StoreUnavailable, :mod:`~saloon.worker.store.reader` the connection held for reads
repeated very often, :mod:`~saloon.worker.store.config` which store a command means. The
store is the truth; Redis only carries work.
"""
