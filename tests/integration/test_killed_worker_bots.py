"""Bot processes never outlive their worker (saloon.referee.process.watch.ParentWatch).

* A real worker playing a path-bot season is killed with -9 at moments spread over its
  bot's start and its match, run after run; after each kill nothing that worker started
  still runs. No other worker of this test runs meanwhile, so no keeper's sweep helps: the
  parent-death chain alone must end them.
* The keeper of a worker that never played a path bot still sweeps the bot processes of
  dead workers (the backstop of the chain).
* The chain's windows, made wide on purpose: a "worker" (a starter process) whose bot's
  set-up spends seconds in the state a fork or a change of uid leaves (no parent-death
  signal), and the process-group containment of a root referee (setpriv's change of uid
  clears the signal for good), each killed with -9.

The tests of the sweep and of the windows run their workers and starters in a PID
namespace of their own (tests.integration.own_pid_namespace): every keeper of this host
sweeps the orphans of its namespace, whoever started them, so another test run's worker
on a shared host swept the idle worker's orphan before it looked, and the window's step
before the test saw it (the regression test
test_another_keeper_on_the_host_never_sweeps_the_idle_workers_orphans_first).

A bot process of a victim is found by what the test planted (its private bot file's name,
or a token, on the command line) or by the victim's own bot folders as its TMPDIR
(``saloon-bot-<victim pid>-...``, inherited by anything the bot starts): never by name.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from saloon.worker.queue.season_queue import SeasonQueue, connect
from saloon.worker.queue.worker import SWEEP_EVERY_S
from saloon.worker.seasons.run import create, start
from saloon.worker.store.store import Store

from .helpers import bot
from .own_pid_namespace import OwnPidNamespace
from .season_fixtures import Workers, queue_name, workers
from .test_process_sandbox import fresh_seed, orphaning_starter, token_pids
from .test_season_failures import private_slow_bot, season

__all__ = ["queue_name", "workers"]

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux only")

#: When each run kills its worker, after the worker's first bot process appears: over the
#: sandbox's set-up (watch, prlimit, unshare's fork, setpriv, the runtime's start) and
#: into the match.
KILL_AFTER_S = (0.0, 0.004, 0.012, 0.025, 0.05, 0.1, 0.3, 0.8)
#: Time the kernel gets to end what a killed worker started (it takes milliseconds).
GONE_WITHIN_S = 5.0
#: How long the widened window lasts (below).
WINDOW_S = 2.0


def processes_of(worker: int, marker: str, named: int | None = None) -> dict[int, str]:
    """Live processes the worker ``worker`` started (pid: command line), found by the
    test's ``marker`` on the command line or the worker's bot folders as their TMPDIR
    (named after ``named``, the worker's pid in its own PID namespace, by default
    ``worker``)."""
    folder = f"/saloon-bot-{worker if named is None else named}-".encode()
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            environ = (entry / "environ").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state not in ("Z", "X") and (marker.encode() in cmdline or folder in environ):
            found[int(entry.name)] = cmdline.replace(b"\0", b" ").decode(errors="replace")
    return found


def end(pids: dict[int, str]) -> None:
    """Kill what a victim of this test left (found by the test's own markers), by pid."""
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def gone(
    worker: int, marker: str, within: float = GONE_WITHIN_S, named: int | None = None
) -> dict[int, str]:
    """What of the worker's processes still runs after ``within`` s (nothing, at once)."""
    deadline = time.monotonic() + within
    while (left := processes_of(worker, marker, named)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


def first_bot_process(worker: int, marker: str, timeout: float) -> bool:
    """True once the worker's first bot process runs (a child of it with the marker)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
                if ppid == worker and marker.encode() in (entry / "cmdline").read_bytes():
                    return True
            except (OSError, ValueError, IndexError):
                continue
        time.sleep(0.002)
    return False


def test_no_bot_process_outlives_a_worker_killed_with_minus_9(
    redis_url: str, queue_name: str, workers: Workers, tmp_path: Path
) -> None:
    path_bot = private_slow_bot(tmp_path, "sluggish_random.py")  # its match outlasts a kill
    url = str(tmp_path / "kills.db")
    sid = f"kill{uuid.uuid4().hex[:6]}"
    with Store.open(url) as store:
        create(store, season(sid, (str(path_bot), "house:random", "house:greedy"), rounds=4))
        start(store, SeasonQueue(connect(redis_url), queue_name), sid, url)
    for delay in KILL_AFTER_S:
        victim = workers.start(redis_url, queue_name)
        assert first_bot_process(victim.pid, path_bot.name, 30), (
            f"the worker started no bot process\n{workers.logs()}"
        )
        time.sleep(delay)
        assert processes_of(victim.pid, path_bot.name)
        os.kill(victim.pid, signal.SIGKILL)
        victim.wait(10)
        left = gone(victim.pid, path_bot.name)
        end(left)
        assert left == {}, f"killed {delay} s after its bot started, the worker left {left}"


#: What a keeper logs when its sweep removed something.
SWEPT = re.compile(r"removed \d+ bot process\(es\) or container\(s\) of dead workers")


@pytest.mark.usefixtures("as_root")
def test_an_idle_workers_keeper_sweeps_bot_processes_whose_starter_died(
    redis_url: str, queue_name: str, workers: Workers
) -> None:
    # The worker has nothing to play (its queue is empty): it never opened a sandbox. It
    # and the starter run in a PID namespace of the test's own: no other keeper sweeps.
    with OwnPidNamespace() as ns:
        worker = workers.start(redis_url, queue_name, prefix=ns.prefix)
        _, token = fresh_seed()
        starter = orphaning_starter(token, prefix=ns.prefix)  # no parent-death watch
        ns.kill(starter)
        assert token_pids(token), "the bot process died with its starter: nothing to sweep"
        assert wait_for(lambda: not token_pids(token), SWEEP_EVERY_S + 30), (
            f"no keeper swept them\n{workers.logs()}"  # the worker boots, then sweeps
        )
        # Its line follows the kills the test saw (CI: read a moment too early, empty).
        assert wait_for(lambda: SWEPT.search(workers.log(worker)), 10), workers.logs()


@pytest.mark.usefixtures("as_root")
def test_another_keeper_on_the_host_never_sweeps_the_idle_workers_orphans_first(
    redis_url: str, queue_name: str, workers: Workers
) -> None:
    # The test above, when its worker and starter ran in the host's PID namespace: the
    # keeper of any other worker of the host (another test run's, on a shared machine)
    # swept its orphan first, and its own worker found nothing to sweep. Here such a
    # keeper runs, and sweeps an orphan of the host's (a decoy) after the starter in the
    # namespace died: it left the namespace's orphan to the worker there.
    workers.start(redis_url, f"{queue_name}-elsewhere")
    with OwnPidNamespace() as ns:
        _, token = fresh_seed()
        _, decoy = fresh_seed()
        starter = orphaning_starter(token, prefix=ns.prefix)
        host_starter = orphaning_starter(decoy)
        ns.kill(starter)
        host_starter.kill()
        host_starter.wait()
        try:
            assert wait_for(lambda: not token_pids(decoy), SWEEP_EVERY_S + 30), (
                f"no keeper of the host swept its orphan\n{workers.logs()}"
            )
        finally:
            end(dict.fromkeys(token_pids(decoy), ""))
        assert token_pids(token), "a keeper of the host swept the namespace's orphan"
        worker = workers.start(redis_url, queue_name, prefix=ns.prefix)
        assert wait_for(lambda: not token_pids(token), SWEEP_EVERY_S + 30), (
            f"the namespace's keeper did not sweep\n{workers.logs()}"
        )
        # Its line follows the kills the test saw (CI: read a moment too early, empty).
        assert wait_for(lambda: SWEPT.search(workers.log(worker)), 10), workers.logs()


#: A "worker" that starts one watched bot process and sleeps: argv BOT CONTAINMENT DELAY
#: TOKEN. CONTAINMENT ``process-group`` forces the process-group containment (a machine
#: without PID namespaces); DELAY > 0 puts a step right before the last watch that spends
#: DELAY seconds without a parent-death signal, as a fork or a change of uid leaves it (the
#: windows of unshare's child before its prctl and of setpriv between its setresuid and its
#: prctl, made wide). TOKEN marks the step's command line.
STARTER = """
import sys, time
from saloon.referee.process import confine
from saloon.referee.process.bot import BotProcess
from saloon.referee.process.watch import PARENT_WATCH

bot, kind, delay, token = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4]
WINDOW = (
    "import ctypes, os, sys, time\\n"
    "ctypes.CDLL(None).prctl(1, 0, 0, 0, 0)\\n"
    "open(os.path.join(os.environ['TMPDIR'], 'in-the-window'), 'w').close()\\n"
    "time.sleep(float(sys.argv[2]))\\n"
    "os.execv('/proc/self/exe', sys.argv[3:])\\n"
)


class SlowSetUp(BotProcess):
    def after_setup(self, runtime):
        last = super().after_setup(runtime)
        return [sys.executable, "-S", "-c", WINDOW, token, str(delay), *last]


if kind == "process-group":
    confine.containment = lambda: confine.Containment.PROCESS_GROUP
process = (SlowSetUp if delay > 0 else BotProcess)(bot, watch=PARENT_WATCH)
process.spawn()
print(process.socket_path, flush=True)
time.sleep(120)
"""


@contextlib.contextmanager
def watched_starter(kind: str, delay: float, token: str) -> Iterator[tuple[int, int, Path]]:
    """A starter process (STARTER) of a bot process, in a PID namespace of its own (no
    keeper of the host sweeps what it leaves: the chain alone must end it): its pid, its
    pid in the namespace (what its bot folders are named after) and its bot's socket
    path; at the end the namespace ends, and everything in it."""
    argv = [sys.executable, "-c", STARTER, bot("function_bot.py"), kind, str(delay), token]
    with OwnPidNamespace() as ns:
        starter = subprocess.Popen([*ns.prefix, *argv], stdout=subprocess.PIPE, text=True)
        try:
            assert starter.stdout is not None
            socket = Path(starter.stdout.readline().strip())
            pid = ns.inner(starter)
            yield pid, ns.pid_in(pid), socket
        finally:
            ns.close()
            starter.wait()
            assert starter.stdout is not None
            starter.stdout.close()


def wait_for(check: Callable[[], object], timeout: float = 30.0) -> bool:
    """True once ``check()`` is, within ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.01)
    return False


@pytest.mark.usefixtures("as_root", "pid_namespace")
def test_a_worker_dead_before_the_last_watch_never_gets_a_runtime() -> None:
    # The set-up spends WINDOW_S after its last fork and change of uid without a
    # parent-death signal; the worker is killed with -9 meanwhile, and unshare's parent
    # dies with it: the last watch finds them gone and never starts the runtime.
    token = f"saloon-window-{uuid.uuid4().hex[:8]}"
    with watched_starter("pid-namespace", WINDOW_S, token) as (worker, named, socket):
        in_window = socket.parent / "in-the-window"
        assert wait_for(in_window.exists), "the set-up never got to the window"
        os.kill(worker, signal.SIGKILL)
        time.sleep(0.3)
        assert token_of(worker, token), "nothing was left in the window: the test proves nothing"
        left = gone(worker, token, within=WINDOW_S + GONE_WITHIN_S, named=named)
        assert left == {}, f"the worker left {left}"
        assert not socket.exists() and not Path(f"{socket}.loading").exists()


@pytest.mark.usefixtures("as_root")
def test_a_root_workers_runtime_in_a_process_group_dies_with_it() -> None:
    # Without PID namespaces a root worker's runtime is setpriv'd to its own uid in the
    # worker's child process: the change of uid cleared its parent-death signal for good.
    token = f"saloon-group-{uuid.uuid4().hex[:8]}"
    with watched_starter("process-group", 0.0, token) as (worker, named, socket):
        assert wait_for(socket.exists), "the bot runtime never served"
        os.kill(worker, signal.SIGKILL)
        left = gone(worker, str(socket), named=named)
        assert left == {}, f"the worker left {left}"


def token_of(worker: int, token: str) -> bool:
    """True while the window's step (``python -S -c WINDOW TOKEN ...``) runs."""
    for pid in processes_of(worker, token):
        with contextlib.suppress(OSError, IndexError):
            if Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[4] == token.encode():
                return True
    return False
