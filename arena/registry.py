"""The arena's registry in the results store: users and tokens, accepted bot versions,
season owners and repeating schedules.

* **Users** have a role (``user`` or ``organiser``) and one API token, ``<user>.<secret>``.
  Only the sha256 of the secret is stored; a token is checked by comparing digests with
  :func:`hmac.compare_digest` (constant time), after finding the user by name. The
  stored digest is also the token's *fingerprint*: a web session keeps the fingerprint of
  the token it was signed in with and ends as soon as it is not the user's any more
  (rotated, or the user removed).
* **Removing** a user keeps their row with no token (:data:`REMOVED`): their token stops
  working and their sessions end, while their bots, versions, seasons and results stay as
  they are, still theirs. The name stays taken, so nobody added later inherits their
  bots; a removed user cannot be given a token again.
* **Bot versions** are accepted here (:meth:`Registry.accept`); how their packages are
  stored and unpacked where a worker seats them is :mod:`saloon.worker.sandbox.stored`,
  which :class:`Registry` extends.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

import sqlalchemy as sa

from saloon.worker.errors import (
    BadToken,
    RegistryError,
    UnknownBot,
    UnknownUser,
    UserExists,
)
from saloon.worker.sandbox.packages import BotPackage
from saloon.worker.sandbox.runtimes import runtime_for
from saloon.worker.sandbox.stored import StoredBots, StoredVersion
from saloon.worker.store import schema as t
from saloon.worker.store.store import VersionRow

#: User names: short, lower-case, safe in a token, a URL and a log line.
USER_NAME_RE = re.compile(r"^[a-z][a-z0-9_-]{0,31}\Z")
#: Bot names: the same alphabet, up to 40 characters.
BOT_NAME_RE = re.compile(r"^[a-z0-9][a-z0-9_-]{0,39}\Z")
#: Bytes of randomness in a token's secret (256 bits).
TOKEN_BYTES = 32
#: The stored token digest of a removed user: not a digest, so no token ever matches it.
REMOVED = "removed"


class Role(StrEnum):
    """What a user may do: ``user`` submits bots; ``organiser`` also runs seasons."""

    USER = "user"
    ORGANISER = "organiser"


@dataclass(frozen=True)
class User:
    """An authenticated user."""

    name: str
    role: Role
    #: Removed by the operator: no token, no sessions (see the module docstring).
    removed: bool = False

    @property
    def organiser(self) -> bool:
        """True when the user may create, start and cancel seasons."""
        return self.role is Role.ORGANISER


@dataclass(frozen=True)
class ScheduleRow:
    """A ladder's repeating seasons."""

    schedule_id: str
    organiser: str
    spec: dict[str, Any]
    every_s: int
    active: bool
    made: int


def check_bot_name(name: str) -> str:
    """The name unchanged if a bot may have it; RegistryError otherwise."""
    if not BOT_NAME_RE.match(name):
        raise RegistryError(
            f"bot name {name[:60]!r}: use 1-40 of a-z, 0-9, '_' and '-', "
            "starting with a letter or digit"
        )
    return name


def check_user_name(name: str) -> str:
    """The name unchanged if a user may have it; RegistryError otherwise."""
    if not USER_NAME_RE.match(name):
        raise RegistryError(
            f"user name {name[:60]!r}: use 1-32 of a-z, 0-9, '_' and '-', starting with a letter"
        )
    return name


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def token_fingerprint(token: str) -> str:
    """The fingerprint of ``token`` (what :meth:`Registry.fingerprint` gives while it is
    its user's current token)."""
    return _digest(token.partition(".")[2])


def _now() -> datetime:
    return datetime.now(UTC)


class Registry(StoredBots):
    """The arena's tables of one :class:`~saloon.worker.store.store.Store`."""

    # -- users ---------------------------------------------------------------------------

    def add_user(self, name: str, role: Role = Role.USER) -> str:
        """Add user ``name``; their new token (shown once, stored hashed)."""
        check_user_name(name)
        secret = secrets.token_urlsafe(TOKEN_BYTES)
        with self.store.write("add user") as conn:
            exists = conn.execute(
                sa.select(t.users.c.token_hash).where(t.users.c.name == name)
            ).one_or_none()
            if exists is not None and exists.token_hash == REMOVED:
                raise UserExists(
                    f"user {name!r} was removed; the name stays taken (their bots keep it)"
                )
            if exists is not None:
                raise UserExists(f"user {name!r} exists (rotate their token instead)")
            conn.execute(
                t.users.insert().values(
                    name=name, role=role.value, token_hash=_digest(secret), created_at=_now()
                )
            )
        return f"{name}.{secret}"

    def rotate_token(self, name: str) -> str:
        """A new token for user ``name``; the old one stops working at once, and so do the
        web sessions signed in with it."""
        secret = secrets.token_urlsafe(TOKEN_BYTES)
        with self.store.write("rotate token") as conn:
            self._check_present(conn, name)
            conn.execute(
                t.users.update().where(t.users.c.name == name).values(token_hash=_digest(secret))
            )
        return f"{name}.{secret}"

    def remove_user(self, name: str) -> None:
        """Remove user ``name``: their token stops working and their web sessions end at
        once; what they own stays (see the module docstring)."""
        with self.store.write("remove user") as conn:
            self._check_present(conn, name)
            conn.execute(t.users.update().where(t.users.c.name == name).values(token_hash=REMOVED))

    @staticmethod
    def _check_present(conn: sa.Connection, name: str) -> None:
        row = conn.execute(
            sa.select(t.users.c.token_hash).where(t.users.c.name == name)
        ).one_or_none()
        if row is None:
            raise UnknownUser(f"no user named {name!r}")
        if row.token_hash == REMOVED:
            raise RegistryError(f"user {name!r} was removed already")

    def users(self) -> list[User]:
        """Every user (removed ones too, marked), by name."""
        with self.store.read("users") as conn:
            rows = conn.execute(sa.select(t.users).order_by(t.users.c.name)).all()
        return [User(r.name, Role(r.role), r.token_hash == REMOVED) for r in rows]

    def fingerprint(self, name: str) -> str | None:
        """The fingerprint of user ``name``'s current token (:func:`token_fingerprint`);
        None when there is no such user or they were removed."""
        with self.store.read("token fingerprint") as conn:
            row = conn.execute(
                sa.select(t.users.c.token_hash).where(t.users.c.name == name)
            ).one_or_none()
        if row is None or row.token_hash == REMOVED:
            return None
        return str(row.token_hash)

    def authenticate(self, token: str) -> User:
        """The user whose token ``token`` is; BadToken (one message for every cause)."""
        name, dot, secret = token.partition(".")
        refused = BadToken("the API token is not valid")
        if not dot or not USER_NAME_RE.match(name) or not 8 <= len(secret) <= 200:
            raise refused
        with self.store.read("authenticate") as conn:
            row = conn.execute(sa.select(t.users).where(t.users.c.name == name)).one_or_none()
        # Compare digests even for an unknown user, so timing does not tell who exists.
        stored = row.token_hash if row is not None else "0" * 64
        if not hmac.compare_digest(_digest(secret).encode(), stored.encode()) or row is None:
            raise refused
        return User(row.name, Role(row.role))

    # -- packages and versions -----------------------------------------------------------

    def bot_game(self, name: str) -> str | None:
        """The game bot ``name`` plays (None for an unknown bot or one with no version)."""
        versions = self.store.versions(name)
        return str(versions[-1].meta.get("game")) if versions else None

    def accept(
        self, owner: str, name: str, game: str, package: BotPackage, meta: dict[str, Any]
    ) -> tuple[VersionRow, bool]:
        """Store an accepted version of bot ``name`` (registering the bot for ``owner``):
        (its row, True when it is new). BotNameTaken when another user owns the name."""
        known = {v.version for v in self.store.versions(name)}
        self.store.add_bot(name, owner)  # first: BotNameTaken before anything is stored
        digest = self.put_package(package)
        row = self.store.add_version(
            name,
            package.version,
            {
                **meta,
                "game": game,
                "package": digest,
                "entry": package.entry,
                "is_folder": package.is_folder,
                "language": package.language.value,
                # What it was built and qualified on: it keeps playing on that image.
                "runtime": runtime_for(package.language).tag(),
            },
        )
        return row, package.version not in known

    def latest(self, game: str = "", owner: str = "") -> list[StoredVersion]:
        """The latest accepted version of every bot (of ``game``, of ``owner``), by name."""
        out = []
        for bot in self.store.bots():
            if owner and bot.owner != owner:
                continue
            versions = self.store.versions(bot.name)
            if not versions:
                continue
            last = versions[-1]
            bot_game = str(last.meta.get("game", ""))
            if game and bot_game != game:
                continue
            out.append(StoredVersion(bot.name, bot.owner, bot_game, last, tuple(versions)))
        return out

    def twin(self, game: str, version: str, name: str) -> str | None:
        """Another bot of ``game`` whose latest version is exactly these files, or None."""
        for stored in self.latest(game=game):
            if stored.bot != name and stored.version.version == version:
                return stored.bot
        return None

    def results_stamp(self) -> tuple[int, str, int, str]:
        """(results, the newest finish, seasons, the newest season change): changes whenever
        a result is added or a season is made or changes status. One round trip."""
        query = sa.select(
            sa.select(sa.func.count()).select_from(t.results).scalar_subquery(),
            sa.select(sa.func.max(t.results.c.finished_at)).scalar_subquery(),
            sa.select(sa.func.count()).select_from(t.seasons).scalar_subquery(),
            sa.select(sa.func.max(t.seasons.c.updated_at)).scalar_subquery(),
        )
        with self.store.read("results stamp") as conn:
            row = conn.execute(query).one()
        return int(row[0]), str(row[1]), int(row[2]), str(row[3])

    # -- season owners and schedules -----------------------------------------------------

    def set_season_owner(self, season_id: str, organiser: str, schedule_id: str = "") -> None:
        """Record who created season ``season_id`` (idempotent)."""
        with self.store.write("season owner") as conn:
            conn.execute(
                self.store.insert_ignore(t.season_owners, ["season_id"]).values(
                    season_id=season_id, organiser=organiser, schedule_id=schedule_id
                )
            )

    def season_owner(self, season_id: str) -> tuple[str, str] | None:
        """(organiser, schedule id) of season ``season_id``, or None."""
        with self.store.read("season owner") as conn:
            row = conn.execute(
                sa.select(t.season_owners).where(t.season_owners.c.season_id == season_id)
            ).one_or_none()
        return None if row is None else (row.organiser, row.schedule_id)

    def add_schedule(
        self, schedule_id: str, organiser: str, spec: dict[str, Any], every_s: int
    ) -> ScheduleRow:
        """Store a repeating schedule (the same id again returns the stored one)."""
        with self.store.write("add schedule") as conn:
            conn.execute(
                self.store.insert_ignore(t.schedules, ["schedule_id"]).values(
                    schedule_id=schedule_id,
                    organiser=organiser,
                    spec=spec,
                    every_s=every_s,
                    active=True,
                    made=0,
                    created_at=_now(),
                )
            )
        found = self.schedule(schedule_id)
        assert found is not None
        return found

    def schedule(self, schedule_id: str) -> ScheduleRow | None:
        """The schedule ``schedule_id``, or None."""
        with self.store.read("schedule") as conn:
            row = conn.execute(
                sa.select(t.schedules).where(t.schedules.c.schedule_id == schedule_id)
            ).one_or_none()
        if row is None:
            return None
        return ScheduleRow(
            row.schedule_id, row.organiser, dict(row.spec), row.every_s, row.active, row.made
        )

    def next_season_number(self, schedule_id: str) -> int | None:
        """Count one more season made by an ACTIVE schedule: its number (1, 2, ...), or None
        when the schedule is inactive or unknown."""
        with self.store.write("schedule tick") as conn:
            row = conn.execute(
                sa.select(t.schedules.c.made, t.schedules.c.active)
                .where(t.schedules.c.schedule_id == schedule_id)
                .with_for_update()
            ).one_or_none()
            if row is None or not row.active:
                return None
            conn.execute(
                t.schedules.update()
                .where(t.schedules.c.schedule_id == schedule_id)
                .values(made=row.made + 1)
            )
        return int(row.made) + 1

    def stop_schedule(self, schedule_id: str) -> ScheduleRow:
        """Make a schedule inactive (no more seasons); RegistryError when unknown."""
        with self.store.write("stop schedule") as conn:
            done = conn.execute(
                t.schedules.update()
                .where(t.schedules.c.schedule_id == schedule_id)
                .values(active=False)
            )
        if done.rowcount != 1:
            raise RegistryError(f"no schedule {schedule_id!r}")
        found = self.schedule(schedule_id)
        assert found is not None
        return found

    def active_schedules(self) -> list[ScheduleRow]:
        """Every schedule still making seasons."""
        with self.store.read("active schedules") as conn:
            rows = conn.execute(sa.select(t.schedules).where(t.schedules.c.active.is_(True))).all()
        return [
            ScheduleRow(r.schedule_id, r.organiser, dict(r.spec), r.every_s, r.active, r.made)
            for r in rows
        ]

    def schedule_seasons(self, schedule_id: str) -> list[str]:
        """The ids of the seasons a schedule made, oldest first."""
        with self.store.read("schedule seasons") as conn:
            rows = conn.execute(
                sa.select(t.season_owners.c.season_id)
                .join(t.seasons, t.seasons.c.season_id == t.season_owners.c.season_id)
                .where(t.season_owners.c.schedule_id == schedule_id)
                .order_by(t.seasons.c.id)
            ).all()
        return [r.season_id for r in rows]

    # -- continuous ladders --------------------------------------------------------------

    def add_continuous(self, ladder_id: str, organiser: str, spec: dict[str, Any]) -> LadderRow:
        """Store a continuous ladder; RegistryError when the id is taken (by a ladder or
        a repeating schedule: their seasons share the season owners' table)."""
        if self.schedule(ladder_id) is not None:
            raise RegistryError(f"{ladder_id!r} is a repeating schedule's id")
        now = _now()
        with self.store.write("add continuous ladder") as conn:
            written = conn.execute(
                self.store.insert_ignore(t.continuous_ladders, ["ladder_id"])
                .values(
                    ladder_id=ladder_id, organiser=organiser, spec=spec, active=True,
                    batches=0, created_at=now, updated_at=now,
                )
                .returning(t.continuous_ladders.c.ladder_id)
            ).scalar_one_or_none()  # fmt: skip
        if written is None:
            raise RegistryError(f"continuous ladder {ladder_id!r} exists")
        found = self.continuous(ladder_id)
        assert found is not None
        return found

    def continuous(self, ladder_id: str) -> LadderRow | None:
        """The continuous ladder ``ladder_id``, or None."""
        with self.store.read("continuous ladder") as conn:
            row = conn.execute(
                sa.select(t.continuous_ladders).where(t.continuous_ladders.c.ladder_id == ladder_id)
            ).one_or_none()
        return None if row is None else _ladder_row(row)

    def continuous_ladders(self, active_only: bool = False) -> list[LadderRow]:
        """Every continuous ladder (only the running ones), by id."""
        query = sa.select(t.continuous_ladders).order_by(t.continuous_ladders.c.ladder_id)
        if active_only:
            query = query.where(t.continuous_ladders.c.active.is_(True))
        with self.store.read("continuous ladders") as conn:
            return [_ladder_row(r) for r in conn.execute(query).all()]

    def set_continuous(
        self,
        ladder_id: str,
        *,
        active: bool | None = None,
        batches: int | None = None,
        spec: dict[str, Any] | None = None,
        expect_batches: int | None = None,
    ) -> bool:
        """Change a continuous ladder; with ``expect_batches``, only if it has made exactly
        that many batches (False otherwise: another driver got there first)."""
        values: dict[str, Any] = {"updated_at": _now()}
        if active is not None:
            values["active"] = active
        if batches is not None:
            values["batches"] = batches
        if spec is not None:
            values["spec"] = spec
        where = t.continuous_ladders.c.ladder_id == ladder_id
        if expect_batches is not None:
            where = where & (t.continuous_ladders.c.batches == expect_batches)
        with self.store.write("change continuous ladder") as conn:
            done = conn.execute(t.continuous_ladders.update().where(where).values(**values))
        return bool(done.rowcount == 1)


@dataclass(frozen=True)
class LadderRow:
    """A continuous ladder as stored."""

    ladder_id: str
    organiser: str
    spec: dict[str, Any]
    active: bool
    batches: int
    created_at: datetime


def _ladder_row(row: Any) -> LadderRow:
    return LadderRow(
        row.ladder_id, row.organiser, dict(row.spec), bool(row.active), int(row.batches),
        row.created_at if row.created_at.tzinfo else row.created_at.replace(tzinfo=UTC),
    )  # fmt: skip


__all__ = [
    "LadderRow",
    "Registry",
    "Role",
    "ScheduleRow",
    "UnknownBot",
    "User",
    "check_bot_name",
    "check_user_name",
]
