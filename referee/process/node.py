"""JavaScript bots in the process sandbox: the kit's Node.js runtime on the machine's node.

``saloon play GAME --seat mybot/`` on a JavaScript package (``saloon.toml`` or a lone
``bot.js``) starts ``node kits/js/run.js ENTRY --socket PATH`` under the same sandbox as a
Python bot (:class:`~saloon.referee.process.bot.BotProcess`: rlimits, its own uid as root,
its own PID namespace, an allow-listed environment). The runtime is the one the Node.js
image carries (``saloon.kits`` ``js``), so a bot plays here as it plays in the arena.

What it needs, refused in one line when missing (:func:`node_unusable`): ``node`` on PATH
(the runtime uses node's own modules alone: no npm package). TypeScript is refused here:
it is compiled once per version by its build step in the Node.js image, so ``--sandbox
docker`` plays it exactly as the arena will (decided: a second, local compile path would
be a second way a version is built).

Node maps far more address space than it uses (V8 reserves its code range and heap
cages up front: ~1 GiB virtual for ~55 MiB resident, measured on node 20 serving a
match), so its address-space rlimit has more headroom than Python's; the memory limit
itself is V8's heap limit (``--max-old-space-size``), and a bot over it dies of "heap out
of memory", a CRASH.
"""

from __future__ import annotations

import os
import shutil

from saloon.kits import kit_dir
from saloon.referee.limits import DEFAULT_SANDBOX_LIMITS, SandboxLimits
from saloon.referee.process.bot import BotProcess
from saloon.referee.process.folders import others_can_read
from saloon.referee.process.watch import ParentWatch
from saloon.sdk.languages import Language, detect_path

#: Address space on top of the memory limit for node (V8's reservations; see above).
NODE_ADDRESS_SPACE_HEADROOM_MB = 1024
#: The kit's runtime entry point.
RUN_JS = "run.js"


def node_unusable(language: Language) -> str | None:
    """Why a bot of ``language`` (JavaScript or TypeScript) cannot run in the process
    sandbox here, in one line; None when it can."""
    if language is Language.TYPESCRIPT:
        return (
            "TypeScript bots are compiled by their build step in the Node.js image: "
            "run them with --sandbox docker"
        )
    if language is not Language.JAVASCRIPT:
        return None
    if shutil.which("node") is None:
        return (
            "no node on PATH: install Node.js (Debian: apt-get install nodejs) to run "
            "JavaScript bots in the process sandbox, or use --sandbox docker"
        )
    kit = kit_dir("js")
    if os.geteuid() == 0 and not others_can_read(kit / RUN_JS):
        return f"the bots' uid cannot read {kit}: give it and the folders above it o+rx"
    return None


class NodeBotProcess(BotProcess):
    """A JavaScript bot's runtime process: the kit's ``run.js`` on the machine's node."""

    address_space_headroom_mb = NODE_ADDRESS_SPACE_HEADROOM_MB

    def __init__(
        self,
        bot: str,
        command: list[str] | None = None,
        limits: SandboxLimits = DEFAULT_SANDBOX_LIMITS,
        *,
        watch: ParentWatch | None = None,
    ) -> None:
        #: The package's entry file, relative to its top (ManifestError if unclear).
        self.entry = detect_path(bot).entry
        super().__init__(bot, command, limits, watch=watch)

    def serve(self, where: str) -> list[str]:
        node = shutil.which("node") or "node"
        entry = where if os.path.isfile(where) else os.path.join(where, self.entry)
        return [
            node,
            f"--max-old-space-size={self.limits.memory_mb}",
            str(kit_dir("js") / RUN_JS),
            entry,
            "--socket",
            "{socket}",
        ]
