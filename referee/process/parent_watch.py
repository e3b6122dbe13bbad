"""The parent-death watch: a program run before a watched bot runtime (Linux).

    python -I -S .../saloon/referee/process/parent_watch.py PARENT_PID PIDFD... -- COMMAND...

Asks the kernel to SIGKILL this process when its parent dies (PR_SET_PDEATHSIG; a worker
killed with -9 cannot clean up), THEN checks that what it hangs on still lives, so that a
death before the prctl is never missed: the pidfds given (readable once their process has
exited) and, when PARENT_PID is not 0, that it is still the parent. Exits if not; else
execs COMMAND, with a pidfd of its own in place of ``{pidfd}`` when COMMAND names it (left
open for a later watch); without it, the pidfds are closed first (the runtime never holds
them). This same interpreter is exec'd as /proc/self/exe: after setpriv, the bot's uid may
not walk its path (a Python under /root), which setpriv could with the capabilities it
keeps until its own exec.

Run as a file by :class:`~saloon.referee.process.watch.ParentWatch` (which imports only
its constants): standard library only, under ``-I -S`` (no site-packages to start, nothing of
the environment's ``PYTHON*`` variables, no script folder on ``sys.path``). Without
``from __future__ import annotations`` either: its import costs ~0.4 ms of CPU a start,
twice per bot process, and the annotations here need nothing of it.
"""

import ctypes
import os
import select
import sys

#: prctl's option that sets the parent-death signal.
PR_SET_PDEATHSIG = 1
#: The signal: SIGKILL (the ``signal`` module is not imported: it costs the start time).
SIGKILL = 9
#: In COMMAND: where a pidfd of this process goes.
OWN_PIDFD = "{pidfd}"


def main(args: list[str]) -> None:
    """Watch, then exec the command of ``args`` (``PARENT_PID PIDFD... -- COMMAND...``)."""
    split = args.index("--")
    pid, fds, argv = int(args[0]), [int(a) for a in args[1:split]], args[split + 1 :]
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0)
    poll = select.poll()
    for fd in fds:
        poll.register(fd, select.POLLIN)
    if poll.poll(0) or (pid and os.getppid() != pid):
        os._exit(1)
    if OWN_PIDFD in argv:
        own = os.pidfd_open(os.getpid())
        os.set_inheritable(own, True)
        argv = [str(own) if a == OWN_PIDFD else a for a in argv]
    else:
        for fd in fds:
            os.close(fd)
    if argv[0] == sys.executable:
        os.execv("/proc/self/exe", argv)
    os.execvp(argv[0], argv)


if __name__ == "__main__":
    main(sys.argv[1:])
