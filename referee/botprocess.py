"""The process sandbox: a bot runtime in a local process, limited, and killed with its match.

The process runs ``python -m saloon.sdk.run BOT --socket PATH``. It is NOT a security
boundary (a bot shares the host's kernel, filesystem and network; containers are the
boundary); it keeps honest bots' mistakes contained and the referee's secrets out of reach:

* containment: where the kernel allows, the runtime is PID 1 of its own PID namespace
  (``unshare --pid --fork --kill-child --mount-proc``, util-linux), so every process the
  bot starts, even one that calls ``setsid``, dies with it; as root directly, otherwise in
  a user namespace when unprivileged ones are allowed, else (a plain process group) a
  child that calls ``setsid`` can outlive the match -- :func:`containment` says which;
* when the referee runs as root, the bot runs as an unprivileged uid of its own (root
  ignores RLIMIT_NPROC, and a uid per bot keeps bots out of each other's process quota);
* rlimits from :class:`~saloon.referee.limits.SandboxLimits` (``prlimit``, util-linux;
  set by Python before exec where util-linux is missing): address space, CPU seconds,
  open files, file size, processes (own uid only), no core;
* an allow-listed environment: nothing of the referee's (database URLs, tokens, paths);
* its stderr is captured (capped) by a thread that never blocks the end of the match.

Processes are only ever signalled through the id of the group the referee created.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import logging
import os
import resource
import select
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
from enum import StrEnum
from pathlib import Path

from saloon.referee.errors import SandboxUnusable
from saloon.referee.limits import DEFAULT_SANDBOX_LIMITS, SandboxLimits

log = logging.getLogger(__name__)

#: How saloon.sdk.run starts the line saying why a bot did not load.
LOAD_ERROR = "saloon.sdk.run: cannot load the bot: "
#: Bytes of a bot's stderr kept per process; the rest is counted and dropped.
STDERR_CAP_BYTES = 64 * 1024
#: Time the referee waits for a killed bot process to be reaped (it is at once, normally).
KILL_WAIT_S = 2.0
#: Time the stderr reader gets, after the kill, to read what is left before it is closed.
DRAIN_GRACE_S = 0.2
#: How often the stderr reader checks whether it should stop.
DRAIN_POLL_MS = 50
#: Address space on top of ``SandboxLimits.memory_mb``: a runtime serving a match maps
#: ~205 MiB of virtual memory for ~47 MiB resident (thread stacks, grpc, two malloc
#: arenas), measured with MALLOC_ARENA_MAX=2 on Python 3.11 / grpcio 1.85.
ADDRESS_SPACE_HEADROOM_MB = 256
#: First uid of the range a root referee runs bots as (no passwd entry needed).
SANDBOX_UID_BASE = 900_000_000
#: Size of that range: each bot process of a referee process gets its own uid in it.
SANDBOX_UID_SPAN = 1_000_000
#: Variables a bot process may inherit from the referee (what Python needs to run).
ENV_ALLOW = (
    "PATH",
    "LANG",
    "LANGUAGE",
    "LC_ALL",
    "LC_CTYPE",
    "TZ",
    "PYTHONPATH",
    "PYTHONHOME",
    "PYTHONHASHSEED",
    "PYTHONDONTWRITEBYTECODE",
    "PYTHONIOENCODING",
    "PYTHONUTF8",
)
SOCKET_NAME = "bot.sock"

_uids = itertools.count()


class Containment(StrEnum):
    """How the processes a bot starts are tied to its runtime process."""

    #: Own PID namespace (the referee is root): every descendant dies with the runtime.
    PID_NAMESPACE = "pid-namespace"
    #: Own user + PID namespace (unprivileged referee): the same, without root.
    USER_NAMESPACE = "user-namespace"
    #: A process group only: a descendant that calls setsid escapes it.
    PROCESS_GROUP = "process-group"


_UNSHARE = ["--pid", "--fork", "--kill-child", "--mount-proc"]


@functools.cache
def _have_util_linux() -> bool:
    """True when prlimit and setpriv (util-linux) are here; else Python sets the limits."""
    return shutil.which("prlimit") is not None and shutil.which("setpriv") is not None


@functools.cache
def containment() -> Containment:
    """The strongest containment this machine allows (probed once per process)."""
    unshare = shutil.which("unshare")
    if unshare is not None and _have_util_linux():
        tries = [(Containment.USER_NAMESPACE, ["--user", "--map-root-user"])]
        if os.geteuid() == 0:
            tries.insert(0, (Containment.PID_NAMESPACE, []))
        for kind, extra in tries:
            probe = [unshare, *extra, *_UNSHARE, "true"]
            with contextlib.suppress(OSError, subprocess.SubprocessError):
                done = subprocess.run(probe, capture_output=True, timeout=10, check=False)
                if done.returncode == 0:
                    return kind
    log.warning("no PID namespace here: a bot's child that calls setsid can outlive its match")
    return Containment.PROCESS_GROUP


def sandbox_env(home: Path) -> dict[str, str]:
    """The environment of a bot process: the allow-list, and its own home and temp dir."""
    env = {name: os.environ[name] for name in ENV_ALLOW if name in os.environ}
    env.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
    env.update(
        HOME=str(home),
        TMPDIR=str(home),
        PYTHONUNBUFFERED="1",
        # Fewer malloc arenas: far less virtual memory per thread under RLIMIT_AS.
        MALLOC_ARENA_MAX="2",
    )
    return env


def rlimits(
    limits: SandboxLimits, own_uid: bool, headroom_mb: int = ADDRESS_SPACE_HEADROOM_MB
) -> list[tuple[str, int, int]]:
    """(name, soft, hard) rlimits for ``limits``; RLIMIT_NPROC only under the bot's own uid.

    Names as ``prlimit --NAME`` and ``resource.RLIMIT_NAME`` spell them. ``headroom_mb``:
    address space on top of ``limits.memory_mb`` (what the runtime maps and never uses).
    """
    mib = 1024 * 1024
    address_space = (limits.memory_mb + headroom_mb) * mib
    out = [
        ("as", address_space, address_space),
        # Soft limit: SIGXCPU; hard limit a little later: SIGKILL.
        ("cpu", limits.cpu_seconds, limits.cpu_seconds + 5),
        ("nofile", limits.open_files, limits.open_files),
        ("fsize", limits.tmpfs_mb * mib, limits.tmpfs_mb * mib),
        ("core", 0, 0),
    ]
    if own_uid:
        out.append(("nproc", limits.pids, limits.pids))
    return out


def rlimit_args(
    limits: SandboxLimits, own_uid: bool, headroom_mb: int = ADDRESS_SPACE_HEADROOM_MB
) -> list[str]:
    """``prlimit`` options for ``limits``."""
    values = rlimits(limits, own_uid, headroom_mb)
    return [f"--{name}={soft}:{hard}" for name, soft, hard in values]


def _set_rlimits(values: list[tuple[str, int, int]], uid: int | None) -> None:
    """In the child before exec, when prlimit/setpriv are missing (not Linux util-linux)."""
    for name, soft, hard in values:
        resource.setrlimit(getattr(resource, f"RLIMIT_{name.upper()}"), (soft, hard))
    if uid is not None:
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)


#: A bot's own folder is ``<root>/saloon-bot-<pid>-<start>-<pidns>-<random>``: the pid, start
#: time and PID namespace of the process that made it (:func:`bot_dir_prefix`), so that a
#: sweep finds what a process killed with -9 left running, and never mistakes another
#: process that got its pid for it.
BOT_DIR_PREFIX = "saloon-bot-"


def process_start(pid: int, proc: str = "/proc") -> tuple[str, int] | None:
    """The state (``R``, ``S``, ``Z``...) of process ``pid`` and when it started, in clock
    ticks after boot (``/proc/<pid>/stat``; a pid and its start time name one process for
    good, where a pid alone is reused); None when there is no such process."""
    try:
        with open(f"{proc}/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        return fields[0].decode(), int(fields[19])
    except (OSError, IndexError, ValueError):
        return None


def pid_namespace(pid: int | str = "self", proc: str = "/proc") -> int:
    """The PID namespace of process ``pid`` (the inode of its ``ns/pid``; 0 without /proc)."""
    try:
        return os.stat(f"{proc}/{pid}/ns/pid").st_ino
    except OSError:
        return 0


@functools.cache
def _own_prefix(pid: int) -> str:
    started = process_start(pid)
    return f"{BOT_DIR_PREFIX}{pid}-{started[1] if started else 0}-{pid_namespace()}-"


def bot_dir_prefix() -> str:
    """The prefix of the bot folders this process makes: its pid, start time and PID
    namespace (0 and 0 without /proc)."""
    return _own_prefix(os.getpid())


def _others_can_enter(path: Path) -> bool:
    """True when a uid that neither owns nor shares a group with them can pass through
    ``path`` and every folder above it."""
    for folder in (path, *path.parents):
        try:
            if not folder.stat().st_mode & stat.S_IXOTH:
                return False
        except OSError:
            return False
    return True


@functools.cache
def _fallback_warned(tmp: str) -> None:
    log.warning(
        "TMPDIR %s is closed to other users (mode 0700?): bots run as their own uid, so their "
        "folders go under /tmp instead",
        tmp,
    )


def sandbox_root(uid: int | None) -> str:
    """Where bot folders go: the temp dir, unless the bot runs as another uid that cannot
    enter it (a root referee with a TMPDIR of mode 0700), then /tmp; SandboxUnusable when
    neither would do."""
    tmp = tempfile.gettempdir()
    if uid is None or _others_can_enter(Path(tmp)):
        return tmp
    if _others_can_enter(Path("/tmp")) and os.access("/tmp", os.W_OK):
        _fallback_warned(tmp)
        return "/tmp"
    raise SandboxUnusable(
        f"TMPDIR {tmp} is closed to other users and /tmp is unusable: a bot runs as its own "
        "uid and could not read its own files (give TMPDIR mode 0711, or another TMPDIR)"
    )


class CappedBuffer:
    """The first ``cap`` bytes of a stream, and how many bytes were dropped after them."""

    def __init__(self, cap: int = STDERR_CAP_BYTES) -> None:
        self.cap = cap
        self.data = bytearray()
        self.dropped = 0
        self._lock = threading.Lock()

    def add(self, chunk: bytes) -> None:
        """Keep what fits under the cap, count the rest."""
        with self._lock:
            room = self.cap - len(self.data)
            if room > 0:
                self.data += chunk[:room]
            self.dropped += max(0, len(chunk) - max(room, 0))

    def text(self) -> str:
        """The kept bytes as text, with a note when some were dropped."""
        with self._lock:
            text = self.data.decode("utf-8", errors="replace")
            if self.dropped:
                text += f"\n[... {self.dropped} more bytes of stderr dropped]\n"
            return text


class BotProcess:
    """One bot runtime process listening on its own unix socket, in the process sandbox."""

    #: Address space on top of the memory limit for this runtime (see rlimits).
    address_space_headroom_mb = ADDRESS_SPACE_HEADROOM_MB

    def __init__(
        self,
        bot: str,
        command: list[str] | None = None,
        limits: SandboxLimits = DEFAULT_SANDBOX_LIMITS,
    ) -> None:
        """``command`` replaces the default runtime argv; ``{socket}`` is the socket path."""
        self.bot = bot
        self.limits = limits
        self.containment = containment()
        #: The uid the bot runs as when the referee is root (None: the referee's own).
        self.uid: int | None = None
        if os.geteuid() == 0:
            self.uid = SANDBOX_UID_BASE + (os.getpid() * 64 + next(_uids)) % SANDBOX_UID_SPAN
        self.stderr = CappedBuffer()
        self._dir = Path(tempfile.mkdtemp(prefix=bot_dir_prefix(), dir=sandbox_root(self.uid)))
        #: (where the runtime loads the bot from, the path its author gave): tracebacks
        #: and load errors are shown with the author's path, never the sandbox's copy.
        self._placed: tuple[str, str] | None = None
        #: The default runtime writes its loading marker (sdk.protocol.loading_marker);
        #: a command of the caller's may not.
        self.announces_loading = command is None
        if command is None:
            command = self.serve(self._place(bot) if os.path.exists(bot) else bot)
        self.command = command
        if self.uid is not None:
            _chown_tree(self._dir, self.uid)
        self.socket_path = self._dir / SOCKET_NAME
        self.proc: subprocess.Popen[bytes] | None = None
        self._drain: threading.Thread | None = None
        self._stop_drain = threading.Event()

    def _place(self, bot: str) -> str:
        """The bot's path for the runtime: under another uid, a copy of the bot's own.

        The bot's uid may not read where its file lives (a root-only home), and should
        not change it. Symlinks are copied as links, never followed (as root).
        """
        source = Path(bot).resolve()
        if self.uid is None:
            self._placed = (str(source), os.path.normpath(bot))
            return str(source)
        target = self._dir / "bot" / source.name
        self._placed = (str(target), os.path.normpath(bot))
        if source.is_dir():
            shutil.copytree(source, target, symlinks=True)
        else:
            target.parent.mkdir()
            shutil.copy2(source, target, follow_symlinks=False)
        return str(target)

    def serve(self, where: str) -> list[str]:
        """The runtime's default command serving the bot at ``where`` (the sandbox's copy
        of it) on ``{socket}``; it writes the loading marker. A subclass serves another
        language."""
        return [sys.executable, "-m", "saloon.sdk.run", where, "--socket", "{socket}"]

    def argv(self) -> list[str]:
        """The whole command line: limits, containment, user, then the runtime."""
        runtime = [arg.replace("{socket}", str(self.socket_path)) for arg in self.command]
        if not _have_util_linux():
            return runtime  # limits and user set before exec (see spawn)
        limits = rlimit_args(self.limits, self.uid is not None, self.address_space_headroom_mb)
        prefix = ["prlimit", *limits, "--"]
        if self.containment is Containment.PROCESS_GROUP:
            if self.uid is not None:
                user = [f"--reuid={self.uid}", f"--regid={self.uid}", "--clear-groups"]
                return [*prefix, "setpriv", *user, "--", *self.after_setup(runtime)]
            return prefix + runtime
        unshare = ["unshare"]
        if self.containment is Containment.USER_NAMESPACE:
            unshare += ["--user", "--map-root-user"]
        unshare += [*_UNSHARE, "--"]
        if self.uid is not None:
            # setpriv, not unshare --setuid: it also clears the supplementary groups. A
            # change of uid clears unshare's --kill-child, so setpriv sets it again.
            user = [f"--reuid={self.uid}", f"--regid={self.uid}", "--clear-groups"]
            unshare += ["setpriv", *user, "--pdeathsig=KILL", "--"]
        return prefix + unshare + self.after_setup(runtime)

    def after_setup(self, runtime: list[str]) -> list[str]:
        """The runtime's command line where the sandbox runs it after its last fork or
        change of uid (unshare's child, setpriv; each clears a parent-death signal, and
        neither checks the parent is still there once set again): a subclass may put a
        step of its own first."""
        return runtime

    def inherited_fds(self) -> tuple[int, ...]:
        """File descriptors of the referee's the process inherits (besides its stdio)."""
        return ()

    def _preexec(self) -> None:
        values = rlimits(self.limits, self.uid is not None, self.address_space_headroom_mb)
        _set_rlimits(values, self.uid)

    def spawn(self) -> None:
        """Start the process (returns at once; the seat waits for it to serve)."""
        if self.proc is not None:
            return
        self.proc = subprocess.Popen(
            self.argv(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,
            env=sandbox_env(self._dir),
            cwd=self._dir,
            pass_fds=self.inherited_fds(),
            preexec_fn=None if _have_util_linux() else self._preexec,
        )
        if self.proc.stderr is not None:
            self._drain = threading.Thread(
                target=self._drain_stderr,
                args=(self.proc.stderr.fileno(),),
                name=f"stderr-{self.proc.pid}",
                daemon=True,
            )
            self._drain.start()

    def _drain_stderr(self, fd: int) -> None:
        """Read stderr until EOF or told to stop (a detached child may hold it open)."""
        poller = select.poll()
        poller.register(fd, select.POLLIN | select.POLLHUP | select.POLLERR)
        while not self._stop_drain.is_set():
            if not poller.poll(DRAIN_POLL_MS):
                continue
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                return
            if not chunk:
                return
            self.stderr.add(chunk)

    def exit_code(self) -> int | None:
        """The exit code once the process has exited, else None."""
        return None if self.proc is None else self.proc.poll()

    def kill(self) -> None:
        """SIGKILL the process group (and so its PID namespace); idempotent.

        No SIGTERM grace: the seat has told the bot the match is over and waited for its
        stream to end, and the runtime keeps nothing. Never waits on what a bot's
        descendants hold open: the stderr reader gets a short, bounded grace to read what
        is left, then the pipe is closed.
        """
        proc = self.proc
        if proc is not None:
            # The group first (start_new_session: its id is the pid we started; unshare's
            # parent is in it), then the runtime (PID 1 of its namespace: its death ends
            # every process in it), even if the bot moved it out of our group. In this
            # order: unshare (util-linux 2.38) whose child dies of SIGKILL while it lives
            # writes "sigprocmask unblock failed" into the bot's stderr.
            children = _children(proc.pid)
            _signal_group(proc.pid, signal.SIGKILL)
            for child in children:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(child, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(KILL_WAIT_S)
            if self._drain is not None:
                self._drain.join(DRAIN_GRACE_S)
                self._stop_drain.set()
                self._drain.join()
            if proc.stderr is not None:
                proc.stderr.close()
        shutil.rmtree(self._dir, ignore_errors=True)

    def show_as(self, name: str) -> None:
        """Name the bot ``name`` in what it reports (:meth:`authored`) instead of the path
        it was given: a sandbox seating a stored package (unpacked in a cache folder of
        the worker's) shows ``bot/<entry>``, as the Docker sandbox's ``/bot`` does."""
        if self._placed is not None:
            self._placed = (self._placed[0], name)

    def authored(self, text: str) -> str:
        """``text`` with the sandbox's copy of the bot named by the author's own path (or
        the name of :meth:`show_as`); no mention of the bot's sandbox folder is left."""
        if self._placed is None:
            return text
        placed, given = self._placed
        text = text.replace(placed, given)
        # Anything else in the bot's folder (the copy's parent, the socket) is the
        # sandbox's, not the author's: never shown as the temporary path it is.
        return text.replace(str(self._dir), "<sandbox>")

    def stderr_text(self) -> str:
        """What the bot wrote to stderr so far (capped), with the author's paths and
        without the sandbox's own noise."""
        return self.authored(_without_noise(self.stderr.text()))

    def stderr_tail(self, limit: int = 400) -> str:
        """The end of what the bot wrote to stderr so far, on one line."""
        text = self.stderr_text().strip().replace("\n", " | ")
        return text[-limit:]

    def load_error(self) -> str | None:
        """The runtime's one-line reason the bot did not load, if it said one."""
        for line in self.stderr_text().splitlines():
            if line.startswith(LOAD_ERROR):
                return line[len(LOAD_ERROR) :]
        return None


#: Lines the sandbox's own tools write into a bot's stderr that say nothing of the bot:
#: unshare 2.38's report of a runtime that died of SIGKILL (a kill of the runtime alone,
#: the CPU limit's SIGKILL) while unshare's own process was alive.
STDERR_NOISE = ("unshare: sigprocmask unblock failed: Invalid argument",)


def _without_noise(text: str) -> str:
    if not any(line in text for line in STDERR_NOISE):
        return text
    return "".join(
        line for line in text.splitlines(keepends=True) if line.rstrip("\n") not in STDERR_NOISE
    )


def _chown_tree(root: Path, uid: int) -> None:
    """Give ``root`` and everything under it (links themselves, not targets) to ``uid``."""
    os.lchown(root, uid, uid)
    for folder, dirs, files in os.walk(root):
        for name in [*dirs, *files]:
            os.lchown(os.path.join(folder, name), uid, uid)


def _children(pid: int) -> list[int]:
    """The direct children of ``pid`` (Linux /proc; none elsewhere)."""
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(word) for word in text.split()]


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)
