"""Workers on other hosts, rehearsed on one machine: the commands the rehearsal runs.

tests/integration/test_multi_host.py runs them; docs/operator-guide.md ("Rehearsing it on
one machine") gives them with the placeholders of :meth:`Rehearsal.placeholders`, and
tests/unit/test_deploy.py checks that the guide gives exactly these.

Each worker container is compose.yaml's ``worker`` service (same image, command, volumes,
environment and restart policy) with two differences: its own ``--hostname`` (a host of
its own), and the host's network instead of compose's bridge, because this machine's Redis
and PostgreSQL listen on 127.0.0.1 only (on real worker hosts compose.worker.yaml maps
``redis`` and ``postgres`` to the main host). The season's path bot must exist on every
worker, so its folder is mounted read-only at /bots (an arena's seasons seat stored bot
versions instead, which the workers read from the store).
"""

from __future__ import annotations

from dataclasses import dataclass

#: The season: the slow path bot (~10 ms a decision) in the Docker sandbox, house bots.
SEASON_OPTIONS = (
    "--game", "seas-of-strife-v1", "--seats", "3", "--sandbox", "docker",
    "--bot", "/bots/slow.py", "--bot", "house:random", "--bot", "house:greedy",
    "--bot", "house:random#2", "--rounds", "1", "--seed", "5", "--start-ms", "30000",
)  # fmt: skip
#: Matches the season schedules (4 entries, 3 seats, 1 round).
SEASON_MATCHES = 12
#: The engine's socket and volume folder, mounted as compose.yaml's worker service mounts
#: them (its package cache is a volume of the rehearsal's own, where compose has
#: ``packages``).
ENGINE_MOUNTS = (
    "-v", "/var/run/docker.sock:/var/run/docker.sock",
    "-v", "/var/lib/docker/volumes:/var/lib/docker/volumes:rslave",
)  # fmt: skip


@dataclass(frozen=True)
class Rehearsal:
    """One rehearsal's names; every command below is built from them."""

    #: The platform image (deploy/platform-image/source-hash.sh --tag).
    platform: str
    #: The run's id: its worker host names, its label, its package volume.
    run: str
    #: The host folder holding slow.py.
    bots: str
    store: str
    redis: str
    queue: str
    season: str

    @classmethod
    def placeholders(cls) -> Rehearsal:
        """The names as docs/operator-guide.md writes them."""
        return cls("$PLATFORM", "$RUN", "$BOTS", "$STORE", "$REDIS", "$Q", "$SEASON")

    @property
    def volume(self) -> str:
        return f"{self.run}-packages"

    def hostname(self, name: str) -> str:
        return f"{self.run}-worker-{name}"

    def saloon(self, *argv: str, bots: bool = False) -> list[str]:
        """A one-off ``saloon`` command from the platform image, as an operator runs it."""
        mounts = ["-v", f"{self.bots}:/bots:ro"] if bots else []
        return [
            "docker",
            "run",
            "--rm",
            "--network",
            "host",
            *mounts,
            self.platform,
            "saloon",
            *argv,
        ]

    def create_volume(self) -> list[str]:
        return ["docker", "volume", "create", self.volume]

    def create(self) -> list[str]:
        return self.saloon(
            "season", "create", self.season, *SEASON_OPTIONS, "--store", self.store, bots=True
        )

    def start(self) -> list[str]:
        return self.saloon(
            "season", "start", self.season, "--store", self.store, "--redis", self.redis,
            "--queue", self.queue, "--batch", "1",
        )  # fmt: skip

    def worker(self, name: str) -> list[str]:
        """Worker ``name`` (a, b): compose.yaml's worker service on a host of its own."""
        return [
            "docker", "run", "-d", "--network", "host", "--hostname", self.hostname(name),
            "--restart", "unless-stopped", "--label", f"saloon.rehearsal={self.run}",
            *ENGINE_MOUNTS, "-v", f"{self.volume}:/var/cache/saloon",
            "-v", f"{self.bots}:/bots:ro", "-e", "SALOON_PACKAGE_CACHE=/var/cache/saloon",
            self.platform, "saloon", "worker", "--redis", self.redis, "--queue", self.queue,
            "--max-jobs", "500", "--store", self.store,
            # Two workers on one host's network: each its own free metrics port.
            "--metrics", "127.0.0.1:0",
        ]  # fmt: skip

    @staticmethod
    def bot_containers(worker: str) -> list[str]:
        """The ids of the bot containers ``worker`` (a container id) started."""
        return ["docker", "ps", "-aq", "--no-trunc", "--filter", f"label=saloon.parent={worker}"]

    @staticmethod
    def kill(worker: str) -> list[str]:
        return ["docker", "kill", worker]

    def status(self) -> list[str]:
        return self.saloon(
            "season", "status", self.season, "--store", self.store, "--redis", self.redis,
            "--queue", self.queue,
        )  # fmt: skip

    @staticmethod
    def stop(worker: str) -> list[str]:
        return ["docker", "stop", worker]

    @staticmethod
    def remove(*containers: str) -> list[str]:
        return ["docker", "rm", "-f", *containers]

    def remove_volume(self) -> list[str]:
        return ["docker", "volume", "rm", self.volume]

    def commands(self, worker_a: str, worker_b: str) -> list[list[str]]:
        """Every command of a rehearsal, in order, for workers of ids ``worker_a``, ``_b``."""
        return [
            self.create_volume(),
            self.create(),
            self.start(),
            self.worker("a"),
            self.worker("b"),
            self.bot_containers(worker_a),
            self.kill(worker_a),
            self.status(),
            self.bot_containers(worker_a),
            self.stop(worker_b),
            self.remove(worker_a, worker_b),
            self.remove_volume(),
        ]
