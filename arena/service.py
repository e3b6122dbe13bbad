"""The arena API's servicer: thin methods over the functions the CLI uses.

Each RPC checks what its caller may do, converts the request, calls one of the platform's
functions (saloon.arena.submit, saloon.arena.ladder, saloon.worker.seasons.run,
saloon.ratings.boards, saloon.referee.replay.seat_view) and converts the reply. Who the
caller is, and what an exception answers, are the interceptor's
(saloon.arena.interceptors): the service is served behind it (saloon.arena.server), and a
method reads its caller with ``current_user()``.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Hashable, Iterator
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from saloon.arena import continuous, ladder, tournament
from saloon.arena.boards import BoardCache
from saloon.arena.errors import (
    NotConfigured,
    PermissionDenied,
    RateLimited,
    ShuttingDown,
    UploadError,
)
from saloon.arena.interceptors import current_user
from saloon.arena.matchmaker import Settings
from saloon.arena.registry import LadderRow, Registry, User
from saloon.arena.secrecy import shown_ladder_settings
from saloon.arena.submit import MAX_UPLOAD_BYTES, Submission, submit
from saloon.arena.tournaments import Tournaments as TournamentsTable
from saloon.ratings.boards import (
    board_stamp,
    game_leaderboard,
    game_scope,
    season_leaderboard,
    season_scope,
)
from saloon.ratings.leaderboard import Leaderboard, render_json
from saloon.referee.record import MatchRecord
from saloon.referee.replay import seat_view
from saloon.referee.seeds import secret_seed
from saloon.sdk.arena_proto import arena_pb2 as pb
from saloon.sdk.arena_proto import arena_pb2_grpc as pb_grpc
from saloon.worker.errors import (
    BotRefError,
    PackageTooLarge,
    RegistryError,
    SeasonSpecError,
    UnknownMatch,
    UnknownSeason,
)
from saloon.worker.queue.season_queue import SeasonQueue
from saloon.worker.sandbox import SandboxKind
from saloon.worker.sandbox.base import Sandbox
from saloon.worker.sandbox.runtimes import version_language
from saloon.worker.seasons import run as seasons


class TokenBucket:
    """Per-key rate limit: ``burst`` at once, then one every ``every_s`` seconds."""

    def __init__(self, burst: int, every_s: float) -> None:
        self.burst = burst
        self.every_s = every_s
        self._lock = threading.Lock()
        self._state: dict[str, tuple[float, float]] = {}

    def take(self, key: str) -> None:
        """Spend one token of ``key``; RateLimited when none is left."""
        now = time.monotonic()
        with self._lock:
            tokens, at = self._state.get(key, (float(self.burst), now))
            tokens = min(float(self.burst), tokens + (now - at) / self.every_s)
            if tokens < 1:
                wait = (1 - tokens) * self.every_s
                raise RateLimited(f"too many submissions; try again in {wait:.0f} s")
            self._state[key] = (tokens - 1, now)


@dataclass
class ArenaConfig:
    """How the service runs (``saloon serve``'s options)."""

    store_url: str
    #: The RQ queue seasons go on (None: seasons can be created, not started).
    queue: SeasonQueue | None
    #: The sandbox submissions qualify in.
    sandbox: Sandbox
    #: The sandbox season matches run in on the workers.
    season_sandbox: SandboxKind = SandboxKind.DOCKER
    submit_burst: int = 5
    submit_every_s: float = 12.0
    #: Qualification matches played at once (each holds a bot runtime).
    qualify_slots: int = 2
    #: How often WatchSeason and WatchLadder look at the store.
    watch_interval_s: float = 0.5


class ArenaService(pb_grpc.ArenaServicer):
    """The Arena gRPC service over one registry (store), queue and sandbox."""

    def __init__(self, registry: Registry, config: ArenaConfig) -> None:
        self.registry = registry
        self.store = registry.store
        self.config = config
        self._submits = TokenBucket(config.submit_burst, config.submit_every_s)
        self._qualify = threading.BoundedSemaphore(config.qualify_slots)
        self.boards = BoardCache(registry)
        #: Set when the server stops: streams that follow progress end at once.
        self.stopping = threading.Event()

    def _queue(self) -> SeasonQueue:
        if self.config.queue is None:
            raise NotConfigured("this server has no queue (saloon serve --redis URL)")
        return self.config.queue

    # -- submissions ---------------------------------------------------------------------

    def SubmitBot(self, request_iterator: Iterator[pb.SubmitChunk], context: Any) -> Any:
        """Take an upload within the caller's rate limit, qualify it, store it if it passes."""
        user = current_user()
        self._submits.take(user.name)
        header, data = _read_upload(request_iterator)
        if header.tournament:  # refused before anything is qualified or stored
            tournament.check_entry(self.registry, header.tournament, user.name, datetime.now(UTC))
        with self._qualify:
            done = submit(
                self.registry,
                user.name,
                header.name,
                header.game,
                data,
                header.filename,
                self.config.sandbox,
            )
        if header.tournament and done.accepted:
            tournament.mark_final(
                self.registry, header.tournament, user.name, done.bot, done.version,
                datetime.now(UTC),
            )  # fmt: skip
            done = replace(done, message=f"{done.message}; final for {header.tournament}")
        return _submit_reply(done)

    def ListBots(self, request: pb.ListBotsRequest, context: Any) -> Any:
        """Bots (by game, by owner) with their accepted versions."""
        reply = pb.ListBotsReply()
        for stored in self.registry.latest(game=request.game, owner=request.owner):
            bot = reply.bots.add(name=stored.bot, owner=stored.owner, game=stored.game)
            for v in stored.history:
                if "package" in v.meta:
                    bot.versions.add(
                        version=v.version,
                        seq=v.seq,
                        created_at=v.created_at.isoformat(),
                        language=version_language(v.meta),
                        runtime=str(v.meta.get("runtime", "")),
                    )
        return reply

    # -- seasons -------------------------------------------------------------------------

    def CreateSeason(self, request: pb.CreateSeasonRequest, context: Any) -> Any:
        """Organisers: a season of a ladder (started, or repeating, when asked)."""
        user = _organiser()
        asked = ladder.LadderRequest(
            game=request.game,
            options=dict(request.options),
            players=request.players,
            rounds=request.rounds or 1,
            seed=_asked_seed(request),
            house=tuple(request.house),
            duplicate=request.duplicate,
            sandbox=self.config.season_sandbox,
        )
        if request.repeat_every_s:
            row, spec = ladder.start_repeating(
                self.registry,
                self._queue(),
                asked,
                user.name,
                request.repeat_every_s,
                self.config.store_url,
                request.season_id,
            )
            return self._season_info(spec.season_id, row.schedule_id)
        spec = ladder.create_season(self.registry, asked, user.name, request.season_id)
        if request.start:
            seasons.start(self.store, self._queue(), spec.season_id, self.config.store_url)
        return self._season_info(spec.season_id)

    def _own_season(self, user: User, season_id: str) -> None:
        owner = self.registry.season_owner(season_id)
        if self.store.season(season_id) is None:
            raise UnknownSeason(f"no season {season_id!r}")
        if owner is not None and owner[0] != user.name:
            raise PermissionDenied(f"season {season_id} is {owner[0]}'s")

    def StartSeason(self, request: pb.SeasonRef, context: Any) -> Any:
        """The season's organiser: enqueue its matches."""
        self._own_season(_organiser(), request.season_id)
        seasons.start(self.store, self._queue(), request.season_id, self.config.store_url)
        return self._season_info(request.season_id)

    def CancelSeason(self, request: pb.SeasonRef, context: Any) -> Any:
        """The season's organiser: drop its unplayed matches."""
        self._own_season(_organiser(), request.season_id)
        seasons.cancel(self.store, request.season_id, self.config.queue)
        return self._season_info(request.season_id)

    def WatchSeason(self, request: pb.SeasonRef, context: Any) -> Iterator[pb.SeasonInfo]:
        """The season's progress now, then at every change, until it ends."""
        last = None
        while context.is_active():
            info = self._season_info(request.season_id)
            key = info.SerializeToString()
            if key != last:
                last = key
                yield info
            if info.status in ("done", "failed", "cancelled"):
                return
            self._watch_pause()

    def CancelSchedule(self, request: pb.ScheduleRef, context: Any) -> Any:
        """The schedule's organiser: stop a ladder's repeating seasons."""
        user = _organiser()
        row = self.registry.schedule(request.schedule_id)
        if row is None:
            raise RegistryError(f"no schedule {request.schedule_id!r}")
        if row.organiser != user.name:
            raise PermissionDenied(f"schedule {row.schedule_id} is {row.organiser}'s")
        row = self.registry.stop_schedule(row.schedule_id)
        return pb.ScheduleInfo(
            schedule_id=row.schedule_id,
            active=row.active,
            every_s=row.every_s,
            seasons=self.registry.schedule_seasons(row.schedule_id),
        )

    def _season_info(self, season_id: str, schedule_id: str = "") -> pb.SeasonInfo:
        p = seasons.progress(self.store, season_id, self.config.queue)
        row = self.store.season(season_id)
        owner = self.registry.season_owner(season_id)
        return pb.SeasonInfo(
            season_id=season_id,
            game=row.game if row else "",
            status=p.status.value,
            total=p.total,
            done=p.done,
            running=p.running,
            failed=p.failed,
            cancelled=p.cancelled,
            participants=list(row.spec.get("participants", [])) if row else [],
            organiser=owner[0] if owner else "",
            schedule_id=schedule_id or (owner[1] if owner else ""),
        )

    # -- continuous ladders --------------------------------------------------------------

    def StartLadder(self, request: pb.StartLadderRequest, context: Any) -> Any:
        """Organisers: a continuous ladder, its first batch made and started now."""
        user = _organiser()
        defaults = Settings()
        asked = continuous.ContinuousRequest(
            ladder_id=request.ladder_id,
            game=request.game,
            options=dict(request.options),
            players=request.players,
            seed=_asked_seed(request),
            house=tuple(request.house),
            duplicate=request.duplicate,
            sandbox=self.config.season_sandbox,
            settings=replace(
                defaults,
                batch=request.batch,
                min_share=request.min_share or defaults.min_share,
                one_per_owner=not request.allow_same_owner,
            ),
            max_batches=request.max_batches,
        )
        continuous.start(self.registry, self._queue(), asked, user.name, self.config.store_url)
        return self._ladder_info(request.ladder_id)

    def StopLadder(self, request: pb.LadderRef, context: Any) -> Any:
        """The ladder's organiser: no more batches."""
        user = _organiser()
        row = self._ladder_row(request.ladder_id)
        if row.organiser != user.name:
            raise PermissionDenied(f"ladder {row.ladder_id} is {row.organiser}'s")
        continuous.stop(self.registry, row.ladder_id)
        return self._ladder_info(row.ladder_id)

    def GetLadder(self, request: pb.LadderRef, context: Any) -> Any:
        """A continuous ladder now, with its board."""
        return self._ladder_info(request.ladder_id)

    def WatchLadder(self, request: pb.LadderRef, context: Any) -> Iterator[pb.LadderInfo]:
        """The ladder now, then at every change, until it has stopped and settled."""
        last = None
        while context.is_active():
            info = self._ladder_info(request.ladder_id)
            key = info.SerializeToString()
            if key != last:
                last = key
                yield info
            if not info.active and (not info.batches or info.batch.status != "running"):
                return
            self._watch_pause()

    def _watch_pause(self) -> None:
        """Wait between two looks of a watch; ShuttingDown when the server stops, so the
        stream ends at once rather than hold the stop for its whole grace (the followers,
        `ladder status --follow` and `ladder continuous status --follow`, reconnect)."""
        if self.stopping.wait(self.config.watch_interval_s):
            raise ShuttingDown("the server is shutting down")

    def _ladder_row(self, ladder_id: str) -> LadderRow:
        row = self.registry.continuous(ladder_id)
        if row is None:
            raise UnknownSeason(f"no continuous ladder {ladder_id!r}")
        return row

    def _ladder_info(self, ladder_id: str) -> pb.LadderInfo:
        self._ladder_row(ladder_id)  # NOT_FOUND for an unknown ladder
        row, asked, board = continuous.ladder_board(self.registry, ladder_id)
        info = pb.LadderInfo(
            ladder_id=row.ladder_id,
            game=asked.game,
            active=row.active,
            batches=row.batches,
            organiser=row.organiser,
            matches=board.standings.matches,
        )
        # The seed for its organiser only until the ladder is over (saloon.arena.secrecy).
        organiser = current_user().name == row.organiser
        settings = shown_ladder_settings(self.registry, row, asked.to_json(), organiser)
        info.settings_json = json.dumps(settings, sort_keys=True)
        info.board.CopyFrom(leaderboard_message(board))
        if row.batches:
            season_id = continuous.batch_season_id(row.ladder_id, row.batches)
            info.batch_season = season_id
            if self.store.season(season_id) is not None:
                info.batch.CopyFrom(self._season_info(season_id))
        return info

    # -- tournaments ---------------------------------------------------------------------

    def CreateTournament(self, request: pb.CreateTournamentRequest, context: Any) -> Any:
        """Organisers: an open tournament (its driver freezes it at the deadline)."""
        user = _organiser()
        try:
            deadline = datetime.fromisoformat(request.deadline)
        except ValueError:
            raise SeasonSpecError(
                f"deadline {request.deadline[:60]!r}: ISO 8601 with a time zone"
            ) from None
        defaults = tournament.FinalsSettings()
        asked = tournament.TournamentRequest(
            tournament_id=request.tournament_id,
            game=request.game,
            deadline=deadline,
            options=dict(request.options),
            players=request.players,
            seed=_asked_seed(request),
            house=tuple(request.house),
            finals_per_owner=request.finals_per_owner or 1,
            qualifying_rounds=(
                request.qualifying_rounds if request.HasField("qualifying_rounds") else 1
            ),
            finals=tournament.FinalsSettings(
                top_k=request.top_k or defaults.top_k,
                confidence=request.confidence or defaults.confidence,
                budget=request.budget or defaults.budget,
                batch_matches=request.batch_matches or defaults.batch_matches,
                table_sizes=tuple(request.table_sizes),
                duplicate=request.duplicate if request.HasField("duplicate") else True,
            ),
            resamples=request.resamples or tournament.DEFAULT_RESAMPLES,
            sandbox=self.config.season_sandbox,
        )
        tournament.create(self.registry, asked, user.name, datetime.now(UTC))
        return self._tournament_info(request.tournament_id)

    def GetTournament(self, request: pb.TournamentRef, context: Any) -> Any:
        """A tournament now (read only: its phase moves in the server's driver)."""
        return self._tournament_info(request.tournament_id)

    def WatchTournament(
        self, request: pb.TournamentRef, context: Any
    ) -> Iterator[pb.TournamentInfo]:
        """The tournament now, then at every change, until it is done or cancelled."""
        last = None
        while context.is_active():
            info = self._tournament_info(request.tournament_id)
            key = info.SerializeToString()
            if key != last:
                last = key
                yield info
            if info.phase in ("done", "cancelled"):
                return
            self._watch_pause()

    def MarkFinal(self, request: pb.MarkFinalRequest, context: Any) -> Any:
        """A bot's owner: mark (or unmark) one of its versions final, before the deadline."""
        user = current_user()
        tournament.mark_final(
            self.registry, request.tournament_id, user.name, request.bot, request.version,
            datetime.now(UTC), clear=request.clear,
        )  # fmt: skip
        return self._tournament_info(request.tournament_id)

    def CancelTournament(self, request: pb.TournamentRef, context: Any) -> Any:
        """The tournament's organiser: cancel it."""
        user = _organiser()
        tournament.cancel(self.registry, self.config.queue, request.tournament_id, user.name)
        return self._tournament_info(request.tournament_id)

    def _tournament_info(self, tournament_id: str) -> pb.TournamentInfo:
        user = current_user()
        row = TournamentsTable(self.store).get(tournament_id)
        data = tournament.status(
            self.registry, row, organiser=user.name == row.organiser, user=user.name,
            queue=self.config.queue,
        )  # fmt: skip
        info = pb.TournamentInfo(
            tournament_id=row.tournament_id,
            game=row.game,
            organiser=row.organiser,
            phase=row.phase.value,
            deadline=data["deadline"],
            frozen_at=data["frozen_at"] or "",
            field=data["field"],
            batches=row.batches,
            matches=data["matches"],
            finals_matches=data["finals_matches"],
            settings_json=json.dumps(data["settings"], sort_keys=True),
            state_json=json.dumps(
                {k: data[k] for k in ("stop", "reason", "field_now", "standing")},
                sort_keys=True,
            ),
            my_finals=data["my_finals"],
        )
        season = data["season"]
        if season is not None:
            info.batch_season = season["season_id"]
            info.batch.CopyFrom(self._season_info(season["season_id"]))
        if row.report is not None:
            info.report_json = json.dumps(row.report["json"], sort_keys=True)
            info.report_csv = tournament.report_csv(row)
        return info

    # -- reading -------------------------------------------------------------------------

    def GetLeaderboard(self, request: pb.LeaderboardRequest, context: Any) -> Any:
        """A ladder's all-time board, or one season's (cached until its results change)."""
        options = tuple(sorted(request.options.items()))
        key = ("api", request.ladder_id, request.season_id, request.game, options)
        return self.boards.get(
            key, lambda: self._board_message(request), lambda: self._board_stamp(request)
        )

    def _board_stamp(self, request: pb.LeaderboardRequest) -> Hashable:
        """The stamp of the board asked for (its checkpoint's: no count of the results)."""
        if request.ladder_id:
            self._ladder_row(request.ladder_id)
            return ("ladder", continuous.ladder_stamp(self.registry, request.ladder_id))
        if request.season_id:
            return board_stamp(self.store, season_scope(self.store, request.season_id))
        return board_stamp(self.store, game_scope(request.game, dict(request.options)))

    def ListMatches(self, request: pb.SeasonRef, context: Any) -> Any:
        """A season's matches in schedule order: seats, status, ranks."""
        if self.store.season(request.season_id) is None:
            raise UnknownSeason(f"no season {request.season_id!r}")
        results = {r.match_id: r for r in self.store.results(season_id=request.season_id)}
        reply = pb.MatchList()
        for row in self.store.scheduled(request.season_id):
            item = reply.matches.add(
                match_id=row.match_id,
                status=row.status.value,
                seats=[str(s) for s in row.spec.get("seats", [])],
            )
            result = results.get(row.match_id)
            if result is not None:
                item.outcome = result.outcome.value
                if all(s.rank is not None for s in result.seats):
                    item.ranks.extend(int(s.rank or 0) for s in result.seats)
        return reply

    def _board_message(self, request: pb.LeaderboardRequest) -> pb.Leaderboard:
        if request.ladder_id:
            self._ladder_row(request.ladder_id)
            return leaderboard_message(continuous.ladder_board(self.registry, request.ladder_id)[2])
        if request.season_id:
            board = season_leaderboard(self.store, request.season_id, details=False)
        else:
            board, _others = game_leaderboard(
                self.store, request.game, dict(request.options), details=False
            )
        return leaderboard_message(board)

    def GetMatch(self, request: pb.MatchRequest, context: Any) -> Any:
        """A match as one seat saw it (its owner also gets its stderr), or in full."""
        user = current_user()
        raw = self.store.match_record(request.match_id)
        if raw is None:
            raise UnknownMatch(f"no recorded match {request.match_id!r}")
        record = MatchRecord.from_json(raw)
        season = self.store.scheduled_match(request.match_id)
        owner = self.registry.season_owner(season.spec.get("season_id", "")) if season else None
        organiser = user.organiser and (owner is None or owner[0] == user.name)
        if request.seat < 0:
            if not organiser:
                raise PermissionDenied("a full match record is for the season's organiser")
            return pb.MatchReply(record_json=json.dumps(raw))
        if request.seat >= len(record.seats):
            raise UnknownMatch(f"match {request.match_id} has no seat {request.seat}")
        own = self._owns_seat(user, record, request.seat)
        if not (own or organiser):
            raise PermissionDenied(
                f"seat {request.seat} of {request.match_id} is not one of your bots"
            )
        view = seat_view(record, request.seat)
        stderr = self.store.stderr(request.match_id, request.seat) if own else ""
        return pb.MatchReply(record_json=json.dumps(view), stderr=stderr)

    def _owns_seat(self, user: User, record: MatchRecord, seat: int) -> bool:
        from saloon.worker.sandbox.stored import parse_ref

        ref = record.seats[seat].bot
        try:
            name, _version = parse_ref(ref)
        except BotRefError:
            return False  # a house bot or a local path: nobody's logs to read
        bot = self.store.bot(name)
        return bot is not None and bot.owner == user.name


def _asked_seed(request: Any) -> int:
    """The seed an organiser set, or a fresh secret one (docs/seasons.md, Secret seeds)."""
    return int(request.seed) if request.HasField("seed") else secret_seed()


def _organiser() -> User:
    """The caller, who must be an organiser (PermissionDenied otherwise)."""
    user = current_user()
    if not user.organiser:
        raise PermissionDenied(f"user {user.name} is not an organiser")
    return user


def _read_upload(chunks: Iterator[pb.SubmitChunk]) -> tuple[pb.SubmitHeader, bytes]:
    """The header and the bytes of an upload stream, refused as soon as it goes wrong."""
    header = None
    parts: list[bytes] = []
    size = 0
    for chunk in chunks:
        which = chunk.WhichOneof("part")
        if which == "header":
            if header is not None:
                raise UploadError("an upload has one header, first")
            header = chunk.header
        elif which == "data":
            if header is None:
                raise UploadError("an upload starts with its header")
            size += len(chunk.data)
            if size > MAX_UPLOAD_BYTES:
                raise PackageTooLarge(f"the upload exceeds {MAX_UPLOAD_BYTES} bytes")
            parts.append(chunk.data)
    if header is None:
        raise UploadError("an upload starts with its header")
    return header, b"".join(parts)


def _submit_reply(done: Submission) -> pb.SubmitReply:
    reply = pb.SubmitReply(
        accepted=done.accepted,
        bot=done.bot,
        version=done.version,
        new_version=done.new_version,
        message=done.message,
    )
    q = done.qualification
    if q is not None:
        reply.qualification.CopyFrom(
            pb.Qualification(
                passed=q.passed,
                match_id=q.match_id,
                opponents=list(q.opponents),
                rank=q.rank,
                faults=list(q.faults),
                stderr=q.stderr,
                seconds=q.seconds,
            )
        )
    return reply


def leaderboard_message(board: Leaderboard) -> pb.Leaderboard:
    """A leaderboard as the API sends it (rows typed, the whole board as JSON beside)."""
    import io

    text = io.StringIO()
    render_json(board, text)
    msg = pb.Leaderboard(title=board.title, json=text.getvalue())
    for row in board.rows:
        msg.rows.add(
            rank=row.rank or 0,
            bot=row.bot,
            owner=row.owner,
            version=row.version,
            conservative=row.conservative or 0.0,
            mu=row.mu or 0.0,
            sigma=row.sigma or 0.0,
            matches=row.matches,
            faults=row.faults,
        )
    return msg
