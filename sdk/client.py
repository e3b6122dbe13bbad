"""``ArenaClient``: the arena API from Python (what ``saloon submit`` and friends use).

    from saloon.sdk import ArenaClient

    with ArenaClient() as arena:               # address + token from the environment/config
        reply = arena.submit("mybot/", game="seizure-v1", name="mybot")
        print(reply.version, reply.accepted, reply.qualification.rank)
        board = arena.leaderboard("seizure-v1")

Where the address and the token come from, first found wins:

1. the arguments (``ArenaClient("arena.example.org:50051", token="alice.s3cret")``);
2. the environment: ``SALOON_SERVER``, ``SALOON_TOKEN`` (and ``SALOON_TLS=1``,
   ``SALOON_TLS_CA=/path/ca.pem``);
3. the config file ``$SALOON_CONFIG`` or ``~/.config/saloon/client.toml``::

       server = "arena.example.org:50051"
       token = "alice.s3cret"
       tls = true
       tls_ca = "/etc/saloon/ca.pem"   # optional: the arena's own certificate authority

TLS trusts the system's certificate authorities, or only the one in ``tls_ca`` (a PEM
file; a self-hosted arena's private CA); giving a CA turns TLS on.

A command that works on an arena server when one is configured and on the local store
otherwise makes that choice with :func:`server_or_local` (and takes ``--server``/``--token``
through :func:`add_server_arguments`).

Errors come back as :class:`ArenaClientError` with the gRPC status code's name and the
server's one-line message. The generated code is imported on first use, so ``import
saloon.sdk`` and the ``saloon`` command's start stay light (no grpc until a call is made;
bot images do not carry the arena API).
"""

from __future__ import annotations

import io
import json
import os
import tarfile
import tomllib
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from saloon.sdk.errors import SdkError

if TYPE_CHECKING:
    import argparse

#: Bytes per upload chunk (the server takes at most 2 MiB a message).
CHUNK_BYTES = 256 * 1024
#: Folders and files never packed from a bot folder.
SKIPPED = {"__pycache__", ".git", ".hg", ".svn", ".mypy_cache", ".pytest_cache", ".venv"}
CONFIG_ENV = "SALOON_CONFIG"
#: ``--server``'s help unless a command says what a server means to it.
SERVER_HELP = "arena host:port ($SALOON_SERVER)"


class ArenaClientError(SdkError):
    """A call the server refused (``code``: the gRPC status name) or could not be made."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


@dataclass(frozen=True)
class ClientConfig:
    """Where the arena is and who is calling."""

    server: str
    token: str
    tls: bool = False
    #: A PEM file of the certificate authorities to trust ("" = the system's).
    tls_ca: str = ""


def config_path() -> Path:
    """The client config file's path ($SALOON_CONFIG or ~/.config/saloon/client.toml)."""
    env = os.environ.get(CONFIG_ENV)
    if env:
        return Path(env)
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "saloon" / "client.toml"


def load_config(
    server: str | None = None, token: str | None = None, tls_ca: str | None = None
) -> ClientConfig | None:
    """The arena to talk to, or None when no server is configured anywhere."""
    file: dict[str, Any] = {}
    path = config_path()
    if path.is_file():
        try:
            file = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise ArenaClientError("INVALID_CONFIG", f"{path}: {exc}") from None
    server = server or os.environ.get("SALOON_SERVER") or file.get("server")
    if not server:
        return None
    token = token or os.environ.get("SALOON_TOKEN") or file.get("token") or ""
    tls_env = os.environ.get("SALOON_TLS")
    tls = tls_env not in ("", "0", "false") if tls_env is not None else bool(file.get("tls"))
    ca = tls_ca or os.environ.get("SALOON_TLS_CA") or file.get("tls_ca") or ""
    return ClientConfig(str(server), str(token), tls or bool(ca), str(ca))


def package_bytes(path: str | os.PathLike[str]) -> tuple[bytes, str]:
    """(upload bytes, file name) of a bot: a file as it is, a folder as a .tar.gz of its
    regular files (caches and version-control folders left out)."""
    p = Path(path)
    if p.is_file():
        return p.read_bytes(), p.name
    if not p.is_dir():
        raise ArenaClientError("INVALID_ARGUMENT", f"no bot file or folder at {p}")
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz", format=tarfile.PAX_FORMAT) as tar:
        for file in sorted(p.rglob("*")):
            rel = file.relative_to(p)
            if any(part in SKIPPED for part in rel.parts) or file.suffix == ".pyc":
                continue
            if file.is_symlink():
                raise ArenaClientError(
                    "INVALID_ARGUMENT", f"{file}: a bot package holds no symbolic links"
                )
            if file.is_file():
                info = tarfile.TarInfo(rel.as_posix())
                data = file.read_bytes()
                info.size = len(data)
                info.mode = 0o644
                tar.addfile(info, io.BytesIO(data))
    return out.getvalue(), f"{p.resolve().name or 'bot'}.tar.gz"


class ArenaClient:
    """A connection to an arena server, as one user."""

    def __init__(
        self,
        server: str | None = None,
        token: str | None = None,
        *,
        tls: bool | None = None,
        tls_ca: str | None = None,
        timeout_s: float = 600.0,
    ) -> None:
        config = load_config(server, token, tls_ca)
        if config is None:
            raise ArenaClientError(
                "NO_SERVER",
                "no arena server configured (pass one, set SALOON_SERVER, or write "
                f"{config_path()})",
            )
        import grpc

        from saloon.sdk.arena_proto import arena_pb2, arena_pb2_grpc

        self.grpc = grpc
        self.pb = arena_pb2
        self.config = config
        self.timeout_s = timeout_s
        use_tls = config.tls if tls is None else tls
        options = [("grpc.max_receive_message_length", 64 * 1024 * 1024)]
        if use_tls:
            roots = None
            if config.tls_ca:
                try:
                    roots = Path(config.tls_ca).read_bytes()
                except OSError as exc:
                    raise ArenaClientError(
                        "INVALID_CONFIG", f"cannot read the TLS CA file {config.tls_ca}: {exc}"
                    ) from None
            creds = grpc.ssl_channel_credentials(root_certificates=roots)
            self.channel = grpc.secure_channel(config.server, creds, options=options)
        else:
            self.channel = grpc.insecure_channel(config.server, options=options)
        self.stub = arena_pb2_grpc.ArenaStub(self.channel)
        self._metadata = (("authorization", f"Bearer {config.token}"),)

    def __enter__(self) -> ArenaClient:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Close the channel."""
        self.channel.close()

    def _call(self, method: Any, request: Any, *, follow: bool = False) -> Any:
        """``method(request)`` with the user's token; ``follow``: a stream that lasts as
        long as what it follows (a season, a ladder), with no deadline (``timeout_s`` would
        end a follow of a long season with DEADLINE_EXCEEDED)."""
        timeout = None if follow else self.timeout_s
        try:
            return method(request, metadata=self._metadata, timeout=timeout)
        except self.grpc.RpcError as exc:
            raise _error(exc) from None

    # -- bots ----------------------------------------------------------------------------

    def submit(
        self, path: str | os.PathLike[str], *, game: str, name: str, tournament: str = ""
    ) -> Any:
        """Upload the bot at ``path`` (a .py file, a folder, a .tar.gz / .tar / .zip) as a
        new version of bot ``name``; the SubmitReply (accepted, version, qualification).
        ``tournament``: refused once its deadline has passed, marked final for it."""
        data, filename = package_bytes(path)
        return self.submit_bytes(data, filename, game=game, name=name, tournament=tournament)

    def submit_bytes(
        self, data: bytes, filename: str, *, game: str, name: str, tournament: str = ""
    ) -> Any:
        """Upload a package given as bytes (see :meth:`submit`)."""
        pb = self.pb
        header = pb.SubmitHeader(name=name, game=game, filename=filename, tournament=tournament)

        def chunks() -> Iterator[Any]:
            yield pb.SubmitChunk(header=header)
            for start in range(0, len(data), CHUNK_BYTES):
                yield pb.SubmitChunk(data=data[start : start + CHUNK_BYTES])

        return self._call(self.stub.SubmitBot, chunks())

    def bots(self, game: str = "", owner: str = "") -> list[Any]:
        """Bots with their accepted versions (BotInfo messages)."""
        request = self.pb.ListBotsRequest(game=game, owner=owner)
        return list(self._call(self.stub.ListBots, request).bots)

    # -- seasons -------------------------------------------------------------------------

    def create_season(
        self,
        game: str,
        *,
        options: Mapping[str, str] | None = None,
        players: int = 0,
        rounds: int = 1,
        seed: int | None = None,
        season_id: str = "",
        house: Sequence[str] = (),
        start: bool = False,
        repeat_every_s: int = 0,
        duplicate: bool = False,
    ) -> Any:
        """A season of ``game``'s ladder (organisers); the SeasonInfo. ``seed`` None: the
        server draws a secret one."""
        request = self.pb.CreateSeasonRequest(
            game=game,
            options=dict(options or {}),
            players=players,
            rounds=rounds,
            seed=seed,
            season_id=season_id,
            house=list(house),
            start=start,
            repeat_every_s=repeat_every_s,
            duplicate=duplicate,
        )
        return self._call(self.stub.CreateSeason, request)

    def start_season(self, season_id: str) -> Any:
        """Enqueue the season's unplayed matches; the SeasonInfo."""
        return self._call(self.stub.StartSeason, self.pb.SeasonRef(season_id=season_id))

    def cancel_season(self, season_id: str) -> Any:
        """Drop the season's unplayed matches; the SeasonInfo."""
        return self._call(self.stub.CancelSeason, self.pb.SeasonRef(season_id=season_id))

    def watch_season(self, season_id: str) -> Iterator[Any]:
        """SeasonInfo now and at each change, until the season has finished (no deadline)."""
        request = self.pb.SeasonRef(season_id=season_id)
        stream = self._call(self.stub.WatchSeason, request, follow=True)
        try:
            yield from stream
        except self.grpc.RpcError as exc:
            raise _error(exc) from None

    def season(self, season_id: str) -> Any:
        """The season's progress now (the first message of :meth:`watch_season`)."""
        stream = self._call(self.stub.WatchSeason, self.pb.SeasonRef(season_id=season_id))
        try:
            first = next(iter(stream))
        except self.grpc.RpcError as exc:
            raise _error(exc) from None
        stream.cancel()
        return first

    def cancel_schedule(self, schedule_id: str) -> Any:
        """Stop a ladder's repeating seasons; the ScheduleInfo."""
        return self._call(self.stub.CancelSchedule, self.pb.ScheduleRef(schedule_id=schedule_id))

    # -- continuous ladders --------------------------------------------------------------

    def start_ladder(
        self,
        ladder_id: str,
        game: str,
        *,
        options: Mapping[str, str] | None = None,
        players: int = 0,
        seed: int | None = None,
        house: Sequence[str] = (),
        duplicate: bool = False,
        batch: int = 0,
        min_share: float = 0.0,
        allow_same_owner: bool = False,
        max_batches: int = 0,
    ) -> Any:
        """Start a continuous ladder (organisers); the LadderInfo. ``seed`` None: the
        server draws a secret one."""
        request = self.pb.StartLadderRequest(
            ladder_id=ladder_id, game=game, options=dict(options or {}), players=players,
            seed=seed, house=list(house), duplicate=duplicate, batch=batch,
            min_share=min_share, allow_same_owner=allow_same_owner, max_batches=max_batches,
        )  # fmt: skip
        return self._call(self.stub.StartLadder, request)

    def stop_ladder(self, ladder_id: str) -> Any:
        """Make no more batches of a continuous ladder; the LadderInfo."""
        return self._call(self.stub.StopLadder, self.pb.LadderRef(ladder_id=ladder_id))

    def ladder(self, ladder_id: str) -> Any:
        """A continuous ladder now, with its board (LadderInfo)."""
        return self._call(self.stub.GetLadder, self.pb.LadderRef(ladder_id=ladder_id))

    def watch_ladder(self, ladder_id: str) -> Iterator[Any]:
        """LadderInfo now and at each change, until the ladder has stopped and settled (no
        deadline)."""
        request = self.pb.LadderRef(ladder_id=ladder_id)
        stream = self._call(self.stub.WatchLadder, request, follow=True)
        try:
            yield from stream
        except self.grpc.RpcError as exc:
            raise _error(exc) from None

    # -- tournaments ---------------------------------------------------------------------

    def create_tournament(
        self, tournament_id: str, game: str, deadline: str, **settings: Any
    ) -> Any:
        """A tournament (organisers); the TournamentInfo. ``deadline``: ISO 8601 with a
        zone; ``settings``: the other fields of CreateTournamentRequest (``seed`` None:
        the server draws a secret one)."""
        request = self.pb.CreateTournamentRequest(
            tournament_id=tournament_id, game=game, deadline=deadline, **settings
        )
        return self._call(self.stub.CreateTournament, request)

    def tournament(self, tournament_id: str) -> Any:
        """A tournament now (TournamentInfo), its report once done."""
        ref = self.pb.TournamentRef(tournament_id=tournament_id)
        return self._call(self.stub.GetTournament, ref)

    def watch_tournament(self, tournament_id: str) -> Iterator[Any]:
        """TournamentInfo now and at each change, until it is done or cancelled (no
        deadline)."""
        ref = self.pb.TournamentRef(tournament_id=tournament_id)
        stream = self._call(self.stub.WatchTournament, ref, follow=True)
        try:
            yield from stream
        except self.grpc.RpcError as exc:
            raise _error(exc) from None

    def mark_final(
        self, tournament_id: str, bot: str, version: str = "", clear: bool = False
    ) -> Any:
        """Mark (``clear``: unmark) a version of one's bot final for a tournament."""
        request = self.pb.MarkFinalRequest(
            tournament_id=tournament_id, bot=bot, version=version, clear=clear
        )
        return self._call(self.stub.MarkFinal, request)

    def cancel_tournament(self, tournament_id: str) -> Any:
        """Cancel a tournament (its organiser); the TournamentInfo."""
        ref = self.pb.TournamentRef(tournament_id=tournament_id)
        return self._call(self.stub.CancelTournament, ref)

    # -- reading -------------------------------------------------------------------------

    def leaderboard(
        self,
        game: str = "",
        options: Mapping[str, str] | None = None,
        season_id: str = "",
        ladder_id: str = "",
    ) -> Any:
        """A ladder's all-time board, one season's, or one continuous ladder's
        (Leaderboard: rows, title, json)."""
        request = self.pb.LeaderboardRequest(
            game=game, options=dict(options or {}), season_id=season_id, ladder_id=ladder_id
        )
        return self._call(self.stub.GetLeaderboard, request)

    def matches(self, season_id: str) -> list[Any]:
        """The season's matches in schedule order (MatchSummary: seats, status, ranks)."""
        reply = self._call(self.stub.ListMatches, self.pb.SeasonRef(season_id=season_id))
        return list(reply.matches)

    def match(self, match_id: str, seat: int = -1) -> tuple[dict[str, Any], str]:
        """(record, stderr) of a match: as ``seat`` saw it (with that bot's stderr for its
        owner), or in full (``seat=-1``, the season's organiser)."""
        reply = self._call(self.stub.GetMatch, self.pb.MatchRequest(match_id=match_id, seat=seat))
        return json.loads(reply.record_json), reply.stderr


@contextmanager
def server_or_local(
    server: str | None, token: str | None, tls_ca: str | None = None
) -> Iterator[ArenaClient | None]:
    """A client of the configured arena server (see :func:`load_config`), or None when no
    server is configured anywhere: then the command works on the local store."""
    if load_config(server, token, tls_ca) is None:
        yield None
        return
    with ArenaClient(server, token, tls_ca=tls_ca) as client:
        yield client


def add_server_arguments(parser: argparse.ArgumentParser, server_help: str = SERVER_HELP) -> None:
    """Add ``--server``, ``--token`` and ``--tls-ca`` (what :func:`server_or_local` takes)."""
    parser.add_argument("--server", default=None, help=server_help)
    parser.add_argument("--token", default=None, help="API token ($SALOON_TOKEN)")
    parser.add_argument(
        "--tls-ca",
        default=None,
        help="PEM file of the CA to trust for TLS, e.g. a self-hosted arena's ($SALOON_TLS_CA)",
    )


def _error(exc: Any) -> ArenaClientError:
    code = exc.code() if hasattr(exc, "code") else None
    details = exc.details() if hasattr(exc, "details") else str(exc)
    return ArenaClientError(code.name if code is not None else "UNKNOWN", str(details))
