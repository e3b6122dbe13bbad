"""The process sandbox: a bot runtime run as a local process, limited, killed with its
match, and as a seat. Not a security boundary (containers are): for trying bots on a
laptop and for workers that run trusted bots.

One module per concept; each module's public names are the API (the package imports
none of them, so a module that needs only the stderr cap does not load gRPC):

* :mod:`~saloon.referee.process.bot`: :class:`BotProcess`, the bot process (spawn, kill,
  its stderr, the author's paths in what it reports).
* :mod:`~saloon.referee.process.node`: :class:`NodeBotProcess`, a JavaScript bot on the
  machine's node, and :func:`node_unusable`.
* :mod:`~saloon.referee.process.confine`: what holds a bot process in: containment (PID
  namespace, user namespace or process group), rlimits, its uid, its environment.
* :mod:`~saloon.referee.process.folders`: a bot process's own folder, named after its
  starter; where it goes.
* :mod:`~saloon.referee.process.stderr`: a bot's stderr, captured and capped.
* :mod:`~saloon.referee.process.watch`: :class:`ParentWatch`, a bot process that dies with
  the process that started it (a worker killed with -9), and its program
  :mod:`~saloon.referee.process.parent_watch` (run as a file, standard library only).
* :mod:`~saloon.referee.process.orphans`: :func:`sweep_orphans`, the backstop: bot
  processes whose starter is gone, killed.
* :mod:`~saloon.referee.process.factory`: process factories, what makes a seat's bot
  process: by the bot's language, and watched.
* :mod:`~saloon.referee.process.seat`: :class:`ProcessSeat`, a bot process as a seat
  (over saloon.referee.remote's gRPC seat).
"""
