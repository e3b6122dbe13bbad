"""The process sandbox's bot process: a bot runtime in a local process, limited, and
killed with its match.

The process runs ``python -m saloon.sdk.run BOT --socket PATH`` (another language's
runtime in a subclass: saloon.referee.process.node). It is NOT a security boundary (a bot
shares the host's kernel, filesystem and network; containers are the boundary); it keeps
honest bots' mistakes contained and the referee's secrets out of reach: containment,
rlimits, a uid of its own as root and an allow-listed environment
(saloon.referee.process.confine), a folder of its own that names its starter
(saloon.referee.process.folders), its stderr captured and capped by a thread that never
blocks the end of the match (saloon.referee.process.stderr), and, given a
:class:`~saloon.referee.process.watch.ParentWatch`, death with the process that started it.

Processes are only ever signalled through the id of the group the referee created.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from saloon.referee.limits import DEFAULT_SANDBOX_LIMITS, SandboxLimits

# Through their modules (confine.containment, folders.bot_dir_prefix): a test's starter
# process replaces them there.
from saloon.referee.process import confine, folders
from saloon.referee.process.confine import (
    ADDRESS_SPACE_HEADROOM_MB,
    UNSHARE_ARGS,
    Containment,
    have_util_linux,
    rlimit_args,
    rlimits,
    sandbox_env,
    set_rlimits,
)
from saloon.referee.process.folders import SOCKET_NAME, chown_tree, sandbox_root
from saloon.referee.process.stderr import LOAD_ERROR, CappedBuffer, StderrReader, without_noise
from saloon.referee.process.watch import ParentWatch

#: Time the referee waits for a killed bot process to be reaped (it is at once, normally).
KILL_WAIT_S = 2.0


class BotProcess:
    """One bot runtime process listening on its own unix socket, in the process sandbox.

    With a ``watch``, it dies with the process that starts it (a worker's bot processes).
    """

    #: Address space on top of the memory limit for this runtime (see rlimits).
    address_space_headroom_mb = ADDRESS_SPACE_HEADROOM_MB

    def __init__(
        self,
        bot: str,
        command: list[str] | None = None,
        limits: SandboxLimits = DEFAULT_SANDBOX_LIMITS,
        *,
        watch: ParentWatch | None = None,
    ) -> None:
        """``command`` replaces the default runtime argv; ``{socket}`` is the socket path.
        ``watch``: the process's whole command line runs under it (SandboxUnusable when it
        could not run here)."""
        if watch is not None:
            watch.check()
        self.bot = bot
        self.limits = limits
        #: The parent-death watch the process runs under (None: none).
        self.watch = watch
        self.containment = confine.containment()
        #: The uid the bot runs as when the referee is root (None: the referee's own).
        self.uid = confine.bot_uid()
        self.stderr = CappedBuffer()
        self._dir = Path(
            tempfile.mkdtemp(prefix=folders.bot_dir_prefix(), dir=sandbox_root(self.uid))
        )
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
            chown_tree(self._dir, self.uid)
        self.socket_path = self._dir / SOCKET_NAME
        self.proc: subprocess.Popen[bytes] | None = None
        self._stderr_reader = StderrReader(self.stderr)

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
        """The whole command line: the watch if any, limits, containment, user, then the
        runtime."""
        sandboxed = self._sandboxed()
        return sandboxed if self.watch is None else self.watch.around(sandboxed)

    def _sandboxed(self) -> list[str]:
        """The command line: limits, containment, user, then the runtime."""
        runtime = [arg.replace("{socket}", str(self.socket_path)) for arg in self.command]
        if not have_util_linux():
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
        unshare += [*UNSHARE_ARGS, "--"]
        if self.uid is not None:
            # setpriv, not unshare --setuid: it also clears the supplementary groups. A
            # change of uid clears unshare's --kill-child, so setpriv sets it again.
            user = [f"--reuid={self.uid}", f"--regid={self.uid}", "--clear-groups"]
            unshare += ["setpriv", *user, "--pdeathsig=KILL", "--"]
        return prefix + unshare + self.after_setup(runtime)

    def after_setup(self, runtime: list[str]) -> list[str]:
        """The runtime's command line where the sandbox runs it after its last fork or
        change of uid (unshare's child, setpriv; each clears a parent-death signal, and
        neither checks the parent is still there once set again): under the watch again,
        if any; a subclass may put a step of its own first."""
        return runtime if self.watch is None else self.watch.before_runtime(runtime)

    def inherited_fds(self) -> tuple[int, ...]:
        """File descriptors of the referee's the process inherits (besides its stdio): the
        watch's, if any."""
        return () if self.watch is None else self.watch.fds()

    def _preexec(self) -> None:
        values = rlimits(self.limits, self.uid is not None, self.address_space_headroom_mb)
        set_rlimits(values, self.uid)

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
            preexec_fn=None if have_util_linux() else self._preexec,
        )
        if self.proc.stderr is not None:
            self._stderr_reader.start(self.proc.stderr.fileno(), f"stderr-{self.proc.pid}")

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
            self._stderr_reader.stop()
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
        return self.authored(without_noise(self.stderr.text()))

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
