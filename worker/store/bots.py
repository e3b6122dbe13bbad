"""The bot registry: bots, their owners and their versions."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from saloon.worker.errors import (
    BotNameTaken,
    StoreError,
    UnknownBot,
)
from saloon.worker.store import schema as t
from saloon.worker.store.connections import (
    StoreBase,
    _as_json,
    _now,
    _utc,
)
from saloon.worker.store.rows import (
    BotRow,
    VersionRow,
)


class Bots(StoreBase):
    """Registered bots and their versions."""

    def add_bot(self, name: str, owner: str) -> BotRow:
        """Register bot ``name`` for ``owner``; the same again is a no-op (BotNameTaken if
        another owner has the name)."""
        if not name or not owner:
            raise StoreError("a bot needs a name and an owner")
        with self.write("add bot") as conn:
            conn.execute(
                self.insert_ignore(t.bots, ["name"]).values(
                    name=name, owner=owner, created_at=_now()
                )
            )
            row = conn.execute(sa.select(t.bots).where(t.bots.c.name == name)).one()
        if row.owner != owner:
            raise BotNameTaken(f"bot name {name!r} is taken by another owner")
        return BotRow(row.name, row.owner, _utc(row.created_at))

    def bot(self, name: str) -> BotRow | None:
        """The bot called ``name``, or None."""
        with self.read("bot") as conn:
            row = conn.execute(sa.select(t.bots).where(t.bots.c.name == name)).one_or_none()
        return None if row is None else BotRow(row.name, row.owner, _utc(row.created_at))

    def bots(self) -> list[BotRow]:
        """Every bot, by name."""
        with self.read("bots") as conn:
            rows = conn.execute(sa.select(t.bots).order_by(self._bytewise(t.bots.c.name))).all()
        return [BotRow(r.name, r.owner, _utc(r.created_at)) for r in rows]

    def add_version(self, bot: str, version: str, meta: dict[str, Any] | None = None) -> VersionRow:
        """Add ``version`` of ``bot``; the same version again returns the stored row (its
        first meta kept)."""
        if not version:
            raise StoreError(f"bot {bot!r}: a version needs a non-empty id")
        meta_json = _as_json(meta or {}, f"meta of {bot}@{version}")
        with self.write("add version") as conn:
            # Row lock on the bot (PostgreSQL): versions of one bot get seq numbers in turn.
            bot_id = conn.execute(
                sa.select(t.bots.c.id).where(t.bots.c.name == bot).with_for_update()
            ).scalar_one_or_none()
            if bot_id is None:
                raise UnknownBot(f"no bot named {bot!r}; add_bot first")
            where = (t.bot_versions.c.bot_id == bot_id) & (t.bot_versions.c.version == version)
            row = conn.execute(sa.select(t.bot_versions).where(where)).one_or_none()
            if row is None:
                seq = conn.execute(
                    sa.select(sa.func.coalesce(sa.func.max(t.bot_versions.c.seq), 0)).where(
                        t.bot_versions.c.bot_id == bot_id
                    )
                ).scalar_one()
                conn.execute(
                    t.bot_versions.insert().values(
                        bot_id=bot_id,
                        version=version,
                        seq=seq + 1,
                        meta=meta_json,
                        created_at=_now(),
                    )
                )
                row = conn.execute(sa.select(t.bot_versions).where(where)).one()
        return VersionRow(bot, row.version, row.seq, dict(row.meta), _utc(row.created_at))

    def versions(self, bot: str) -> list[VersionRow]:
        """The versions of ``bot``, oldest first ([] for an unknown bot)."""
        query = (
            sa.select(t.bot_versions)
            .join(t.bots, t.bots.c.id == t.bot_versions.c.bot_id)
            .where(t.bots.c.name == bot)
            .order_by(t.bot_versions.c.seq)
        )
        with self.read("versions") as conn:
            rows = conn.execute(query).all()
        return [VersionRow(bot, r.version, r.seq, dict(r.meta), _utc(r.created_at)) for r in rows]
