"""The Docker sandbox: each bot runtime in a locked-down container, kept warm per bot version.

A runtime is one container of the bot's image (:mod:`saloon.worker.sandbox.images`) running
``python3 -m saloon.sdk.run /bot --socket /run/saloon/bot.sock`` with no network, a
read-only root filesystem and a small ``/tmp`` tmpfs, a non-root user, every capability
dropped, no-new-privileges, memory (swap included), CPU, pids and open-file limits, and an
environment of the image's few variables only. Its one mount is the socket directory; the
referee reaches the bot through ``bot.sock`` in it with a :class:`GrpcSeat`.

The socket directory is a tmpfs volume of 64 KiB (when the referee runs as root: the
engine's volume folder is only root's; it carries the container's labels and is removed
with it, or by name after it when the container was removed without it: an operator's
``docker rm -f``; a sandbox's sweep and close remove the ones no container holds), or a
host temporary folder otherwise. The bot owns it until its runtime has bound the socket;
then the referee takes it over (root-owned, 0755), so the bot can no longer replace, move
or add anything in it, and the referee only ever connects to a real socket there, never to a link.

Bot images: a seat's image is looked up (and built when missing) once, then remembered by
version and runtime image; the engine is asked again every :data:`IMAGE_RECHECK_S`,
which marks the image used so that no worker's prune removes an image in use. An image
removed anyway (another worker's prune, an operator's ``docker image prune``) is rebuilt
when a container cannot be created for want of it, and the container created again: a
missing image is the platform's to mend, never a bot's fault or a failed match.
A version's image is built once per host: a sandbox builds it for all its threads at
once, and under a host lock (:mod:`saloon.worker.sandbox.hostlock`) for the other
processes of the host, which take the image the first one built.

Warm pool: after a match that ended cleanly, a runtime goes back to the pool of its bot
version (image, limits and container runtime) and serves that version's next match; after
any fault it is removed, and the next match gets a fresh one. A runtime idle for
:data:`IDLE_TIMEOUT_S` is removed. A runtime serves one seat at a time, so two seats of one
match never share a runtime process (each gets its own container).

A warm runtime never meets a deal twice: a seat names its match's deal (the match seed:
the matches of a duplicate deal share it, see saloon.worker.seasons.schedule), the runtime
handed out notes it, and a runtime that has seen that deal is never handed another match
of it (its other rotations, a retried match, another season of the same seed). Module
globals survive between a runtime's matches, so a bot that remembered the cards of one
rotation would otherwise play the next with every hand open. The check is made where the
runtime is handed out, under the pool's lock, so it holds however matches are batched,
interleaved or retried on this sandbox; runtimes never move between sandboxes (workers).

Every container carries the labels ``saloon=1``, ``saloon.owner=<owner>``,
``saloon.host`` and ``saloon.pid``, and is tracked and removed by id, never by name. The
owner is the worker's id when given (stable across restarts: a worker that starts again
after a crash removes every container of its owner id first); otherwise
``<host>-<pid>`` of the process. Every new sandbox also removes the containers of this
host whose creating process is gone (label ``saloon.pid``), whatever their owner.

A worker that runs in a container of the same engine (compose.yaml's workers, on this or
another host name) also labels its bots' containers ``saloon.parent=<its container id>``:
a pid inside a container says nothing to another container (each has its own pid
namespace, and a restarted worker has the same pid), so every sandbox of the engine
removes the containers whose parent container is no longer running, whatever their host.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import re
import socket as socketlib
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from saloon.referee.errors import BotSpecError
from saloon.referee.limits import DEFAULT_SANDBOX_LIMITS, SandboxInfo, SandboxLimits
from saloon.referee.process.stderr import STDERR_CAP_BYTES, CappedBuffer
from saloon.referee.remote import BotConnection
from saloon.referee.seats import Seat
from saloon.worker.errors import DockerUnavailable, SandboxError, WorkerError
from saloon.worker.sandbox.base import Sandbox
from saloon.worker.sandbox.build import DEFAULT_BUILD_LIMITS, BuildLimits, build_version
from saloon.worker.sandbox.docker_seat import DockerSeat
from saloon.worker.sandbox.hostlock import host_lock
from saloon.worker.sandbox.images import (
    LABEL,
    MARK_EVERY_S,
    base_tag,
    current_bot_image,
    ensure_bot_image,
)
from saloon.worker.sandbox.packages import BotPackage, load_package
from saloon.worker.sandbox.runtimes import Runtime as LanguageRuntime
from saloon.worker.sandbox.runtimes import pinned_runtime, runtime_for

log = logging.getLogger(__name__)

#: A warm runtime idle this long is removed.
IDLE_TIMEOUT_S = 300.0
#: Deals a runtime remembers having played (Runtime.deals); one that has played this many
#: is removed after its match rather than pooled again, so it never forgets one.
MAX_DEALS_SEEN = 10_000
#: How often the reaper looks for idle runtimes.
REAP_INTERVAL_S = 5.0
#: Where the socket directory is mounted in the container, and the socket's name.
SOCKET_DIR = "/run/saloon"
SOCKET_NAME = "bot.sock"
#: Size of the socket directory's tmpfs: a socket needs none, a bot gets nothing to fill.
SOCKET_DIR_BYTES = 64 * 1024
#: The bot's user in the image (deploy/bot-image/).
BOT_UID = 10001
#: Bytes of a container's logs the engine keeps on disk (one file): a flooding bot cannot
#: fill the host's disk. The seat keeps :data:`STDERR_CAP_BYTES` of each match's part.
LOG_MAX_SIZE = "1m"
#: Container runtimes: runc (Docker's default) and gVisor (must be registered with the
#: engine as ``runsc`` with runtime args ``--network=none --host-uds=create``).
RUNTIMES = ("runc", "runsc")
#: The pids limit of a gVisor container: there it counts the host threads of gVisor's own
#: kernel (the Sentry, a Go program with a thread per core and per blocking call), which
#: panics at start under a limit of 64. The bot's processes are then bounded by memory.
RUNSC_MIN_PIDS = 512
#: What the sandbox adds to the image's environment (an allow-list: nothing of the
#: referee's own environment ever reaches a bot).
RUNTIME_ENVIRONMENT: dict[str, str] = {}
_ENGINE_TIMEOUT_S = 60
#: Seconds to wait for a container someone else is removing, before removing its volume.
REMOVED_WAIT_S = 30
#: How long a seat's image, once looked up, is used without asking the engine again (the
#: lookup marks it used: well within the prune's idle time, images.PRUNE_MIN_IDLE_S).
IMAGE_RECHECK_S = MARK_EVERY_S / 2
#: How long a process waits for another's build of an image beyond that build's step
#: (BuildLimits.wall_s): the image build itself (a copy of the package, seconds).
IMAGE_BUILD_WAIT_S = 120.0


def default_owner() -> str:
    """The owner id of a sandbox opened without one: this host and process."""
    return f"{socketlib.gethostname()}-{os.getpid()}"


@dataclass(eq=False)
class Runtime:
    """One container serving one bot version."""

    container_id: str
    key: tuple[str, SandboxLimits, str]
    #: The socket directory as the referee sees it.
    host_dir: Path
    #: A host folder to delete after the container (when not a volume).
    own_dir: Path | None
    #: The socket directory's volume (when one): removed after the container, also when
    #: the container was removed without it (an operator's ``docker rm -f``).
    volume: str | None = None
    started: float = field(default_factory=time.time)
    last_used: float = field(default_factory=time.monotonic)
    matches: int = 0
    locked: bool = False
    #: The warm gRPC channel to the runtime, reused match after match (it belongs to the
    #: thread that opened it; a seat in another thread opens a channel of its own).
    connection: BotConnection | None = None
    #: The deals (match seeds) this runtime was handed: it never gets another match of one.
    deals: set[int] = field(default_factory=set)

    @property
    def socket_path(self) -> Path:
        """The bot's socket, as the referee reaches it."""
        return self.host_dir / SOCKET_NAME


class DockerSandbox(Sandbox):
    """Bot runtimes in containers of one Docker engine, warm per bot version."""

    kind = "docker"

    def __init__(
        self,
        owner: str | None = None,
        runtime: str = "runc",
        idle_timeout_s: float = IDLE_TIMEOUT_S,
        warm: bool = True,
        client: Any = None,
        reap_interval_s: float | None = REAP_INTERVAL_S,
        build_limits: BuildLimits = DEFAULT_BUILD_LIMITS,
    ) -> None:
        import docker

        if runtime not in RUNTIMES:
            raise SandboxError(f"unknown container runtime {runtime!r}: one of {RUNTIMES}")
        self.runtime = runtime
        self.idle_timeout_s = idle_timeout_s
        # How often the background reaper looks for idle runtimes; None: no background
        # reaper (the owner calls reap() itself). Never more often than 10 times a second,
        # whatever the idle timeout: an idle timeout of 0 must not become a busy loop.
        self.reap_interval_s = (
            None if reap_interval_s is None else max(0.1, min(reap_interval_s, idle_timeout_s))
        )
        self.warm = warm
        #: What a compiled version's build step may use (saloon.worker.sandbox.build).
        self.build_limits = build_limits
        self.owner = owner or default_owner()
        try:
            self.client = client or docker.from_env(timeout=_ENGINE_TIMEOUT_S, max_pool_size=32)
            self.client.ping()
        except Exception as exc:  # any failure to reach the engine means no sandbox
            raise DockerUnavailable(f"no Docker engine answers: {exc}") from None
        if runtime != "runc" and runtime not in self.client.info().get("Runtimes", {}):
            raise SandboxError(f"the Docker engine has no {runtime!r} runtime registered")
        self.base = base_tag()
        self._use_volume = os.geteuid() == 0
        self._lock = threading.Lock()
        #: version@base -> (its image's tag, when the engine last said it was there).
        self._images: dict[str, tuple[str, float]] = {}
        #: version@base -> held while that image is looked up or built (see image).
        self._looking_up: dict[str, threading.Lock] = {}
        self._idle: dict[tuple[str, SandboxLimits, str], list[Runtime]] = {}
        self._all: dict[str, Runtime] = {}
        self._closed = threading.Event()
        self.removed_leftovers = self.remove_leftovers()
        self._reaper: threading.Thread | None = None
        if self.reap_interval_s is not None:
            self._reaper = threading.Thread(
                target=self._reap_loop,
                args=(self.reap_interval_s,),
                name="sandbox-reaper",
                daemon=True,
            )
            self._reaper.start()

    # -- seats ----------------------------------------------------------------------------
    def seat(
        self,
        bot_path: str,
        bot_id: str,
        bot_version: str = "",
        limits: SandboxLimits = DEFAULT_SANDBOX_LIMITS,
        deal: int | None = None,
    ) -> Seat:
        """A seat on the bot package at ``bot_path``: validated, its image built if new. Its
        runtime has never played ``deal`` (the match seed) when one is given."""
        package = load_package(bot_path)
        runtime_for(package.language)  # UnsupportedLanguage before anything is built
        tag = self.image(package, pinned_runtime(bot_path))
        seat = DockerSeat(self, package, tag, bot_id, limits, deal)
        seat.bot_version = bot_version or package.version
        return seat

    def image(self, package: BotPackage, runtime_tag: str | None = None) -> str:
        """The tag of the package's image (built once per version and runtime image).

        ``runtime_tag``: the runtime image a stored version was built on (pinned: see
        saloon.worker.sandbox.stored.PINNED_RUNTIME); else its language's current one.
        """
        runtime = runtime_for(package.language)
        base = runtime_tag or (self.base if runtime.kit is None else runtime.tag())
        key = f"{package.version}@{base}"
        with self._lock:
            one_at_a_time = self._looking_up.setdefault(key, threading.Lock())
        # One lookup or build of a version at a time: the seats of a version that come
        # together (matches played at once, a rebuild after a prune) wait for the first's.
        with one_at_a_time:
            now = time.monotonic()  # upkeep only: when to ask the engine again
            with self._lock:
                cached = self._images.get(key)
            if cached is not None and now - cached[1] < IMAGE_RECHECK_S:
                return cached[0]
            tag = current_bot_image(self.client, package, base)
            if tag is None:
                tag = self._build_image(package, runtime, base, key)
            with self._lock:
                self._images[key] = (tag, now)
            return tag

    def _build_image(
        self, package: BotPackage, runtime: LanguageRuntime, base: str, key: str
    ) -> str:
        """Build the version's image (its build step first, for a compiled language), under
        the host lock of ``key``: the other processes of this host (workers on one engine)
        that meet the version now wait for this build and take its image."""
        wait_s = self.build_limits.wall_s + IMAGE_BUILD_WAIT_S
        with host_lock(f"bot-image:{key}", wait_s) as held:
            if not held:
                log.warning(
                    "%s: no image build lock (another process of this host held it for "
                    "%g s, or there is none to be had): building the image here",
                    package.version,
                    wait_s,
                )
            tag = current_bot_image(self.client, package, base)  # built while we waited?
            if tag is not None:
                return tag
            built = None
            if runtime.build is not None:
                built = build_version(
                    self.client, package, runtime, base, self.build_limits, self.owner
                )
            return ensure_bot_image(self.client, package, base, built)

    def _rebuild(self, package: BotPackage, tag: str) -> str:
        """The image ``tag`` was not in the engine (removed after it was looked up): forget
        it, and build it again on the base it was built on."""
        base: str | None = None
        with self._lock:
            for key in [k for k, (t, _) in self._images.items() if t == tag]:
                base = key.split("@", 1)[1]  # version@base (see image)
                del self._images[key]
        log.warning("bot image %s was removed from the engine: building it again", tag)
        return self.image(package, base)

    def info(self, limits: SandboxLimits) -> SandboxInfo:
        """What the record says about a seat of this sandbox."""
        return SandboxInfo("docker", limits, self.runtime)

    # -- runtimes -------------------------------------------------------------------------
    def acquire(
        self, package: BotPackage, tag: str, limits: SandboxLimits, deal: int | None = None
    ) -> Runtime:
        """A runtime of the bot for one seat: a warm one of its version that has never
        played ``deal`` (the most recently used of them), or a new one. The deal is noted
        on the runtime as it is handed out (under the pool's lock): no other seat gets it
        for that deal, whatever runs at the same time."""
        key = (tag, limits, self.runtime)
        while True:
            with self._lock:
                if self._closed.is_set():
                    raise SandboxError("the sandbox is closed")
                warm = _take(self._idle.get(key, []), deal)
            if warm is None:
                break
            # A runtime that died while idle (a thread of its own left running out of
            # memory) is replaced here, not found dead by an innocent match.
            if self.state(warm).running:
                warm.matches += 1
                return warm
            self._remove(warm)
        started = time.perf_counter()
        runtime = self._start(package, tag, limits, key)
        # Imported here: this module loads without the platform's libraries (docker,
        # prometheus_client), e.g. for own_container_id in a bare image.
        from saloon.worker.metrics import SANDBOX_START_SECONDS, SANDBOX_STARTS

        SANDBOX_STARTS.labels("docker").inc()
        SANDBOX_START_SECONDS.labels("docker").observe(time.perf_counter() - started)
        if deal is not None:
            runtime.deals.add(deal)
        runtime.matches = 1
        return runtime

    def idle_count(self) -> int:
        """Bot containers kept warm, idle, for the next seats."""
        with self._lock:
            return sum(len(idle) for idle in self._idle.values())

    def release(self, runtime: Runtime, healthy: bool) -> None:
        """Give a runtime back after a seat: to the pool if healthy and warm (and not full
        of deals, :data:`MAX_DEALS_SEEN`), else remove it."""
        if healthy and len(runtime.deals) >= MAX_DEALS_SEEN:
            healthy = False
        if healthy and self.warm and not self._closed.is_set():
            with self._lock:
                runtime.last_used = time.monotonic()
                self._idle.setdefault(runtime.key, []).append(runtime)
            return
        self._remove(runtime)

    def _start(
        self, package: BotPackage, tag: str, limits: SandboxLimits, key: tuple[Any, ...]
    ) -> Runtime:
        import docker.errors
        import docker.types

        labels = {
            LABEL: "1",
            "saloon.owner": self.owner,
            "saloon.host": socketlib.gethostname(),
            "saloon.pid": str(os.getpid()),
            "saloon.bot.version": package.version,
        }
        if parent := own_container_id():
            labels["saloon.parent"] = parent
        own_dir: Path | None = None
        if self._use_volume:
            options = {
                "type": "tmpfs",
                "device": "tmpfs",
                "o": f"size={SOCKET_DIR_BYTES},uid={BOT_UID},gid={BOT_UID},mode=0700",
            }
            mount = docker.types.Mount(
                target=SOCKET_DIR,
                source=None,
                type="volume",
                # The container's labels: what a check for leftovers finds it by.
                labels=labels,
                driver_config=docker.types.DriverConfig("local", options),
            )
        else:
            own_dir = Path(tempfile.mkdtemp(prefix="saloon-docker-"))
            own_dir.chmod(0o777)  # the bot's uid binds its socket here; locked after
            mount = docker.types.Mount(target=SOCKET_DIR, source=str(own_dir), type="bind")
        try:
            options = self._container_options(package, limits, labels, mount)
            container = self._create(package, tag, options)
        except (docker.errors.APIError, WorkerError) as exc:  # WorkerError: a failed rebuild
            if own_dir is not None:
                _remove_dir(own_dir)
            raise SandboxError(f"cannot create a container of {tag}: {exc}") from None
        # Tracked from the moment it exists, so close() removes it whatever happens next.
        placeholder = Runtime(container.id, key, own_dir or Path("/nonexistent"), own_dir)
        with self._lock:
            self._all[container.id] = placeholder
        try:
            container.start()
            if own_dir is None:
                container.reload()
                mount_info = next(
                    m for m in container.attrs["Mounts"] if m["Destination"] == SOCKET_DIR
                )
                placeholder.host_dir = Path(mount_info["Source"])
                placeholder.volume = mount_info.get("Name") or None
        except (docker.errors.APIError, StopIteration, KeyError) as exc:
            self._remove(placeholder)
            raise SandboxError(f"cannot start a container of {tag}: {exc}") from None
        log.debug("started %s (%s) for %s", container.id[:12], tag, package.version)
        return placeholder

    def _create(self, package: BotPackage, tag: str, options: dict[str, Any]) -> Any:
        """A container of ``tag`` (created, not started); its image is built again, once,
        when it was removed from the engine since it was looked up."""
        import docker.errors

        try:
            return self.client.containers.create(tag, **options)
        except docker.errors.ImageNotFound:
            return self.client.containers.create(self._rebuild(package, tag), **options)

    def _container_options(
        self,
        package: BotPackage,
        limits: SandboxLimits,
        labels: dict[str, str],
        mount: Any,
    ) -> dict[str, Any]:
        """What a runtime's container is created with (the lock-down: module docstring)."""
        import docker.types

        return dict(
            command=runtime_for(package.language).serve(package, f"{SOCKET_DIR}/{SOCKET_NAME}"),
            name=f"saloon-bot-{uuid.uuid4().hex[:12]}",
            labels=labels,
            user=f"{BOT_UID}:{BOT_UID}",
            working_dir="/tmp",
            # The image's variables only (PATH, HOME, PYTHON*): nothing of the referee's.
            environment=dict(RUNTIME_ENVIRONMENT),
            network_mode="none",
            read_only=True,
            tmpfs={"/tmp": f"size={limits.tmpfs_mb}m,mode=1777,nosuid,nodev,noexec"},
            mounts=[mount],
            cap_drop=["ALL"],
            security_opt=["no-new-privileges"],
            mem_limit=f"{limits.memory_mb}m",
            memswap_limit=f"{limits.memory_mb}m",
            nano_cpus=int(limits.cpus * 1_000_000_000),
            pids_limit=limits.pids if self.runtime == "runc" else max(limits.pids, RUNSC_MIN_PIDS),
            ulimits=[
                docker.types.Ulimit(name="nofile", soft=limits.open_files, hard=limits.open_files)
            ],
            # An init as PID 1 reaps the bot's orphans and forwards signals.
            init=True,
            ipc_mode="private",
            # /dev/shm is a tmpfs anyone may write: as small as /tmp.
            shm_size=f"{limits.tmpfs_mb}m",
            hostname="bot",
            runtime=self.runtime,
            log_config=docker.types.LogConfig(
                type="json-file", config={"max-size": LOG_MAX_SIZE, "max-file": "1"}
            ),
            stdin_open=False,
            detach=True,
        )

    def state(self, runtime: Runtime) -> ContainerState:
        """Whether a runtime's container runs, from the engine; if not, why, and whether
        the engine is to blame (it cannot tell, or the container is gone or being removed:
        a bot cannot remove its own container) rather than the bot."""
        import docker.errors

        try:
            info = self.client.api.inspect_container(runtime.container_id)
        except docker.errors.NotFound:
            return ContainerState(False, "the container is gone", engine=True)
        except Exception as exc:  # APIError, or the engine not answering at all
            return ContainerState(False, f"the engine cannot inspect the container: {exc}", True)
        return container_state(info)

    def wait_exit(self, runtime: Runtime, timeout_s: float) -> None:
        """Wait (bounded) for a runtime's container to stop."""
        with contextlib.suppress(Exception):  # a timeout or a gone container: both fine
            self.client.api.wait(runtime.container_id, timeout=timeout_s)

    def logs(self, runtime: Runtime, since: float | None) -> str:
        """What the runtime wrote (stderr and stdout) since ``since``, capped."""
        buffer = CappedBuffer(STDERR_CAP_BYTES)
        with contextlib.suppress(Exception):  # no logs is not worth a failure
            kwargs: dict[str, Any] = {"stdout": True, "stderr": True}
            if since is not None:
                kwargs["since"] = since
            buffer.add(self.client.api.logs(runtime.container_id, **kwargs))
        return buffer.text()

    def lock_socket_dir(self, runtime: Runtime) -> None:
        """Take the socket directory from the bot once it serves (see the module doc)."""
        if runtime.locked:
            return
        if os.geteuid() == 0:
            os.chown(runtime.host_dir, 0, 0)
        runtime.host_dir.chmod(0o755)
        runtime.locked = True

    def _remove(self, runtime: Runtime) -> None:
        import docker.errors

        with self._lock:
            self._all.pop(runtime.container_id, None)
        connection = runtime.connection
        if connection is not None and connection.thread_id == threading.get_ident():
            connection.close()
        try:
            self.client.api.remove_container(runtime.container_id, v=True, force=True)
        except docker.errors.NotFound:
            pass
        except docker.errors.APIError as exc:
            log.warning("cannot remove container %s: %s", runtime.container_id[:12], exc)
            if runtime.volume is not None:
                # Most often someone else removes it right now (an operator's `docker rm
                # -f`, without its volume): its volume can go once it is gone (bounded).
                with contextlib.suppress(Exception):  # gone already, or still there: fine
                    self.client.api.wait(
                        runtime.container_id, timeout=REMOVED_WAIT_S, condition="removed"
                    )
        if runtime.volume is not None:
            # Removed with the container (v=True) unless the container was removed without
            # it by someone else: then only this removes it.
            _remove_volume(self.client, runtime.volume)
        if runtime.own_dir is not None:
            _remove_dir(runtime.own_dir)

    # -- housekeeping ---------------------------------------------------------------------
    def reap(self) -> int:
        """Remove the runtimes idle for longer than the idle timeout; how many."""
        now = time.monotonic()
        stale: list[Runtime] = []
        with self._lock:
            for key, idle in list(self._idle.items()):
                keep = [r for r in idle if now - r.last_used < self.idle_timeout_s]
                stale += [r for r in idle if now - r.last_used >= self.idle_timeout_s]
                self._idle[key] = keep
        for runtime in stale:
            self._remove(runtime)
        return len(stale)

    def _reap_loop(self, interval_s: float) -> None:
        while not self._closed.wait(interval_s):
            try:
                self.reap()
            except Exception:  # the reaper must outlive a hiccup of the engine
                log.exception("reaping idle runtimes failed")

    def container_ids(self) -> set[str]:
        """Ids of every container this sandbox holds (busy or idle)."""
        with self._lock:
            return set(self._all)

    def remove_leftovers(self) -> int:
        """Remove this owner's containers left by an earlier run (after a crash), and those
        of this host whose creating process is gone (whatever their owner); how many."""
        return self._remove_where(lambda labels: labels.get("saloon.owner") == self.owner)

    def sweep(self) -> int:
        """Remove the containers of this host whose creating process is gone (a worker
        killed with -9 mid-match leaves its runtimes running); how many. Never one of
        this sandbox's own: their creator is this live process."""
        return self._remove_where(lambda labels: False)

    def _remove_where(self, also: Callable[[dict[str, str]], bool]) -> int:
        """Remove every saloon container of this host whose creating process is gone, and
        every one whose labels satisfy ``also``; how many. The socket volumes no container
        holds any more (their container removed without them) go by the same rule."""
        found: dict[str, Any] = {}
        host = socketlib.gethostname()
        parents: dict[str, bool] = {}

        def gone(labels: dict[str, str]) -> bool:
            parent = labels.get("saloon.parent", "")
            if parent:  # its worker's container stopped or was removed
                if parent not in parents:
                    parents[parent] = self._running(parent)
                return not parents[parent]
            return labels.get("saloon.host") == host and not _pid_alive(
                labels.get("saloon.pid", "")
            )

        for c in self.client.api.containers(all=True, filters={"label": [f"{LABEL}=1"]}):
            labels = c.get("Labels") or {}
            if also(labels) or gone(labels):
                found[c["Id"]] = c
        for container_id in found:
            with contextlib.suppress(Exception):  # gone meanwhile is fine
                self.client.api.remove_container(container_id, v=True, force=True)
        if found:
            log.warning("removed %d leftover container(s) (owner %s)", len(found), self.owner)
        volumes = self._remove_dangling_volumes(lambda labels: also(labels) or gone(labels))
        if volumes:
            log.warning("removed %d leftover volume(s) (owner %s)", volumes, self.owner)
        return len(found)

    def _remove_dangling_volumes(self, which: Callable[[dict[str, str]], bool]) -> int:
        """Remove the saloon volumes no container holds whose labels satisfy ``which``;
        how many."""
        try:
            listed = self.client.api.volumes(filters={"label": [f"{LABEL}=1"], "dangling": True})
        except Exception as exc:  # upkeep: an engine hiccup is no reason to fail
            log.warning("cannot list leftover volumes: %s", exc)
            return 0
        removed = 0
        for volume in (listed or {}).get("Volumes") or []:
            if which(volume.get("Labels") or {}) and _remove_volume(self.client, volume["Name"]):
                removed += 1
        return removed

    def _running(self, container_id: str) -> bool:
        """Whether the engine runs ``container_id`` (True when it cannot tell: kept)."""
        import docker.errors

        try:
            state = self.client.api.inspect_container(container_id).get("State") or {}
        except docker.errors.NotFound:
            return False
        except docker.errors.APIError:
            return True
        return bool(state.get("Running"))

    def close(self) -> None:
        """Remove every container this sandbox started, and every socket volume of its
        owner that no container holds; idempotent."""
        self._closed.set()
        with self._lock:
            runtimes = list(self._all.values())
            self._idle.clear()
        for runtime in runtimes:
            self._remove(runtime)
        self._remove_dangling_volumes(lambda labels: labels.get("saloon.owner") == self.owner)


class ContainerState(NamedTuple):
    """What the engine says of a runtime's container (DockerSandbox.state)."""

    running: bool
    #: Why it does not run ("" when it does).
    why: str
    #: The engine, not the bot, is why: it cannot tell, or the container is gone.
    engine: bool = False


#: The exit code of a container whose process SIGKILL ended (128 + 9; docker-init passes
#: its child's on).
SIGKILLED = 137


def container_state(info: dict[str, Any]) -> ContainerState:
    """What the engine's inspection of a runtime's container (``info``) says of it.

    The engine marks an out-of-memory kill (``OOMKilled``), but not always: measured with
    Docker 28 on cgroup v2, 1 in 24 memory bombs exited 137 with the mark unset, and still
    unset half a second later (it learns of the kill from the kernel apart from the exit,
    and the exit can come first). The sandbox never kills a runtime itself (it removes the
    container, which reads as gone or being removed), so a SIGKILL with no mark is named
    for what it most likely was: the memory limit.
    """
    st = info.get("State", {})
    if st.get("Running"):
        return ContainerState(True, "")
    if st.get("Status") in ("removing", "dead"):
        return ContainerState(False, f"the container is {st['Status']}", engine=True)
    limit = info.get("HostConfig", {}).get("Memory", 0) // (1024 * 1024)
    if st.get("OOMKilled"):
        return ContainerState(False, f"killed: out of memory (limit {limit} MiB)")
    code = st.get("ExitCode")
    if code == SIGKILLED:
        return ContainerState(
            False,
            f"killed by SIGKILL (exit code {code}): out of memory most likely "
            f"(limit {limit} MiB; the engine did not say)",
        )
    return ContainerState(False, f"the bot runtime exited with code {code}")


def _take(idle: list[Runtime], deal: int | None) -> Runtime | None:
    """Take from ``idle`` (least recently used first) the last runtime that has not played
    ``deal`` and note the deal on it; None when every one has (the caller holds the lock)."""
    for i in range(len(idle) - 1, -1, -1):
        runtime = idle[i]
        if deal is None or deal not in runtime.deals:
            del idle[i]
            if deal is not None:
                runtime.deals.add(deal)
            return runtime
    return None


@functools.cache
def own_container_id() -> str:
    """The id of the container this process runs in ("" outside one): the engine bind-mounts
    its /etc/hostname from ``.../containers/<id>/hostname``, which /proc/self/mountinfo shows."""
    try:
        text = Path("/proc/self/mountinfo").read_text()
    except OSError:
        return ""
    found = re.search(r"/containers/([0-9a-f]{64})/hostname ", text)
    return found.group(1) if found else ""


def _pid_alive(text: str) -> bool:
    try:
        pid = int(text)
    except ValueError:
        return True  # unknown: keep it
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _remove_volume(client: Any, name: str) -> bool:
    """Remove volume ``name``; whether it was there to remove (one still held by a
    container stays, and is said in the log)."""
    import docker.errors

    try:
        client.api.remove_volume(name)
    except docker.errors.NotFound:
        return False
    except docker.errors.APIError as exc:
        log.warning("cannot remove volume %s: %s", name[:12], exc)
        return False
    return True


def _remove_dir(path: Path) -> None:
    import shutil

    with contextlib.suppress(OSError):
        path.chmod(0o700)
    shutil.rmtree(path, ignore_errors=True)


# -- the ``docker:`` seat kind of ``saloon play`` (SEAT_KINDS in saloon.arena.cli) ----------
_play_sandbox: DockerSandbox | None = None
_play_lock = threading.Lock()


def play_seat(path: str, game_id: str) -> Seat:
    """A seat for ``saloon play --seat docker:PATH``: one sandbox per process, closed at exit."""
    import atexit

    global _play_sandbox
    try:
        with _play_lock:
            if _play_sandbox is None:
                _play_sandbox = DockerSandbox(warm=False)
                atexit.register(_play_sandbox.close)
            sandbox = _play_sandbox
        return sandbox.seat(path, f"docker:{path}")
    except WorkerError as exc:
        raise BotSpecError(f"seat docker:{path}: {exc}") from None
