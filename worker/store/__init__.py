"""The results store: one SQL database (a SQLite file by default, PostgreSQL by URL).

:mod:`~saloon.worker.store.store` is the store itself (results written once per match id,
seasons, schedules, bots and their versions), :mod:`~saloon.worker.store.rows` the rows it
returns, :mod:`~saloon.worker.store.schema` its tables, :mod:`~saloon.worker.store.engine`
the engines and migrations (``migrations/``, Alembic), :mod:`~saloon.worker.store.config`
which store a command means. The store is the truth; Redis only carries work.
"""
