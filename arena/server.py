"""``saloon serve``: the arena API over gRPC, the standard health service, and the
leaderboards over HTTP, on one store (and one Redis queue for seasons).

Submissions qualify in this process's sandbox (``--sandbox docker`` in production: the
service then needs its host's Docker engine, like a worker); season matches run on the
workers.
"""

from __future__ import annotations

import errno
import logging
import socket
import threading
import time
from concurrent import futures
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from saloon.arena import DEFAULT_HTTP, DEFAULT_LISTEN, tournament
from saloon.arena.continuous import drive
from saloon.arena.errors import AddressInUse
from saloon.arena.failures import RepeatedFailure
from saloon.arena.interceptors import ArenaInterceptor
from saloon.arena.ladder import rearm_schedules
from saloon.arena.metrics import register_arena_metrics
from saloon.arena.registry import Registry
from saloon.arena.service import ArenaConfig, ArenaService
from saloon.arena.web.app import build_app
from saloon.arena.web.serve import WebServer
from saloon.sdk.arena_proto import arena_pb2_grpc as pb_grpc
from saloon.worker.queue.keepers import requeue_lost
from saloon.worker.queue.season_queue import SeasonQueue, connect
from saloon.worker.sandbox import SandboxKind, open_sandbox
from saloon.worker.store.store import Store

log = logging.getLogger(__name__)

SERVICE_NAME = "saloon.v1.Arena"
#: How often the service checks that every active schedule has its next job queued.
SCHEDULE_CHECK_S = 60.0
#: How often it enqueues again the pending matches no queue holds (as often as the workers'
#: keepers, saloon.worker.queue.worker.REQUEUE_EVERY_S: a season whose Redis restarted
#: empty completes within a minute when the server is the only one looking).
REQUEUE_CHECK_S = 10.0
#: How often the driver looks whether a continuous ladder's batch has finished.
LADDER_TICK_S = 0.5
#: A chunk of an upload is at most 1 MiB; the whole upload is capped by the service.
MAX_MESSAGE_BYTES = 2 * 1024 * 1024


@dataclass
class ServeOptions:
    """What ``saloon serve`` is told."""

    store_url: str
    redis_url: str | None = None
    queue_name: str = "saloon"
    listen: str = DEFAULT_LISTEN
    #: host:port of the leaderboard web server ("" = none).
    http: str = DEFAULT_HTTP
    sandbox: str = "docker"
    season_sandbox: str = "docker"
    submit_burst: int = 5
    submit_every_s: float = 12.0
    threads: int = 32
    tls_cert: str = ""
    tls_key: str = ""


def _address_held(listen: str) -> bool:
    """True when another socket holds every address ``listen`` (host:port) names.

    gRPC fails to bind such an address, but its C core first logs a line of its own on
    stderr; ``saloon serve`` looks first, to refuse in one line. False for port 0, a name
    that does not resolve, or a ``unix:`` address: gRPC then decides (and says why).
    """
    host, _, port = listen.rpartition(":")
    if not port.isdigit() or int(port) == 0:
        return False
    try:
        addresses = socket.getaddrinfo(
            host.strip("[]") or None, int(port), type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )
    except OSError:
        return False
    for family, kind, proto, _name, address in addresses:
        with socket.socket(family, kind, proto) as probe:
            # As gRPC binds: SO_REUSEADDR on, SO_REUSEPORT off (see ArenaServer).
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind(address)
            except OSError as exc:
                if exc.errno == errno.EADDRINUSE:
                    continue  # held: look at the next address
            return False  # free (or refused for another reason gRPC will report)
    return bool(addresses)


class ArenaServer:
    """A running arena service (gRPC + health + HTTP boards)."""

    def __init__(self, options: ServeOptions) -> None:
        self.options = options
        self.store = Store.open(options.store_url)
        register_arena_metrics(self.store, options.redis_url, options.queue_name)
        queue = None
        if options.redis_url:
            queue = SeasonQueue(connect(options.redis_url), options.queue_name)
        self.sandbox = open_sandbox(options.sandbox)
        self.service = ArenaService(
            Registry(self.store),
            ArenaConfig(
                store_url=options.store_url,
                queue=queue,
                sandbox=self.sandbox,
                season_sandbox=SandboxKind(options.season_sandbox),
                submit_burst=options.submit_burst,
                submit_every_s=options.submit_every_s,
            ),
        )
        self.grpc = grpc.server(
            futures.ThreadPoolExecutor(max_workers=options.threads, thread_name_prefix="arena"),
            # Every Arena RPC authenticated and its errors mapped here; health needs no token.
            interceptors=[ArenaInterceptor(self.service.registry.authenticate, SERVICE_NAME)],
            options=[
                ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
                ("grpc.max_send_message_length", 64 * 1024 * 1024),
                # gRPC sets SO_REUSEPORT by default: a second server on a port in use would
                # start and share it. Off, the second one fails with "address in use".
                ("grpc.so_reuseport", 0),
            ],
        )
        pb_grpc.add_ArenaServicer_to_server(self.service, self.grpc)
        self.health = health.HealthServicer()
        health_pb2_grpc.add_HealthServicer_to_server(self.health, self.grpc)
        try:
            if _address_held(options.listen):  # gRPC would fail, after a line of its own
                self.port = 0
            elif options.tls_cert:
                creds = grpc.ssl_server_credentials(
                    [(Path(options.tls_key).read_bytes(), Path(options.tls_cert).read_bytes())]
                )
                self.port = self.grpc.add_secure_port(options.listen, creds)
            else:
                self.port = self.grpc.add_insecure_port(options.listen)
        except RuntimeError:  # gRPC says only "Failed to bind"; the port is held (see above)
            self.port = 0
        if self.port == 0:
            self._close_early()
            raise AddressInUse(f"cannot listen on {options.listen}: address in use")
        self.boards: WebServer | None = None
        if options.http:
            host, _, port = options.http.rpartition(":")
            address = (host.strip("[]") or "127.0.0.1", int(port))
            # The web side serves TLS with the gRPC port's certificate when it has one.
            try:
                self.boards = WebServer(
                    address,
                    build_app(self.store, self.service.boards),
                    tls_cert=options.tls_cert,
                    tls_key=options.tls_key,
                )
            except OSError as exc:  # its port is held: the same one-line refusal as gRPC's
                self._close_early()
                raise AddressInUse(
                    f"cannot serve the web side on {options.http}: {exc.strerror or exc}"
                ) from None
        self._stopped = threading.Event()
        self._keeper: threading.Thread | None = None
        self._driver: threading.Thread | None = None

    @property
    def address(self) -> str:
        """host:port the gRPC API answers on."""
        host = self.options.listen.rpartition(":")[0]
        return f"{host}:{self.port}"

    def start(self) -> None:
        """Start serving (gRPC and HTTP); health says SERVING."""
        self.grpc.start()
        if self.boards is not None:
            self.boards.start()
        for name in ("", SERVICE_NAME):
            self.health.set(name, health_pb2.HealthCheckResponse.SERVING)
        if self.service.config.queue is not None:
            self._keeper = threading.Thread(target=self._keep, name="schedules", daemon=True)
            self._keeper.start()
            self._driver = threading.Thread(target=self._drive, name="ladders", daemon=True)
            self._driver.start()
        log.info("arena API on %s, boards on %s", self.address, self.options.http or "-")

    def _keep(self) -> None:
        """Re-arm repeating schedules whose next job Redis lost (now and every
        SCHEDULE_CHECK_S), and enqueue again the pending matches no queue holds (the store
        is the truth; now and every REQUEUE_CHECK_S: one query per running season)."""
        queue = self.service.config.queue
        assert queue is not None
        rearmed: float | None = None
        rearming = RepeatedFailure(log, "re-arming schedules")
        requeueing = RepeatedFailure(log, "re-enqueueing lost matches")
        while True:
            if rearmed is None or time.monotonic() - rearmed >= SCHEDULE_CHECK_S:
                rearmed = time.monotonic()
                try:
                    rearm_schedules(self.service.registry, queue, self.options.store_url)
                    rearming.succeeded()
                except Exception:  # Redis or the store away: try again next time
                    rearming.failed()
            try:
                requeue_lost(self.store, queue, self.options.store_url)
                requeueing.succeeded()
            except Exception:  # Redis or the store away: try again next time
                requeueing.failed()
            if self._stopped.wait(REQUEUE_CHECK_S):
                return

    def _drive(self) -> None:
        """Keep every running continuous ladder's queue topped up (saloon.arena.continuous)
        and move every tournament on (saloon.arena.tournament: the one place its phase
        changes; the deadline is checked against the time read here)."""
        queue = self.service.config.queue
        assert queue is not None
        driving = RepeatedFailure(log, "driving continuous ladders")
        tournaments = RepeatedFailure(log, "driving tournaments")
        while not self._stopped.wait(LADDER_TICK_S):
            try:
                drive(self.service.registry, queue, self.options.store_url)
                driving.succeeded()
            except Exception:  # the store or Redis away: try again at the next tick
                driving.failed()
            try:
                now = datetime.now(UTC)
                tournament.drive(self.service.registry, queue, self.options.store_url, now)
                tournaments.succeeded()
            except Exception:  # the store or Redis away: try again at the next tick
                tournaments.failed()

    def _close_early(self) -> None:
        """Release what __init__ opened before it failed (no thread runs yet)."""
        self.grpc.stop(0)
        self.sandbox.close()
        self.store.close()

    def wait(self) -> None:
        """Block until stopped."""
        self._stopped.wait()

    def stop(self, grace: float = 5.0) -> None:
        """Stop serving, close the sandbox and the store.

        Streams that only follow progress (WatchSeason, WatchLadder) end at once, so they do
        not hold the stop for the whole grace; calls that do work get ``grace`` seconds.
        """
        self.health.enter_graceful_shutdown()
        self.service.stopping.set()
        self.grpc.stop(grace).wait()
        if self.boards is not None:
            self.boards.stop()
        self._stopped.set()
        if self._keeper is not None:
            self._keeper.join(10)
        if self._driver is not None:
            self._driver.join(10)
        # A report still computing is left to the next server (the tournament stays
        # reporting): waited for a little only, never holding the stop.
        tournament.REPORTS.join(5)
        self.sandbox.close()
        self.store.close()
