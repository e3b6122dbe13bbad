"""A season whose bot path runs in the Docker sandbox: every match recorded, no container left.

The seasons and the sandbox meet in ``saloon.worker.matches.play.seat_for``; this plays a short
season through the command line, as an organiser would, with a real engine.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from saloon.worker.store.store import Store

HONEST = str(Path(__file__).parent / "hostile" / "honest")


def test_a_season_with_docker_seats_records_every_match(
    tmp_path: Path, docker_engine: None
) -> None:
    import docker

    db = str(tmp_path / "s.db")
    argv = [sys.executable, "-m", "saloon.arena.cli", "season", "run", "dk1"]
    argv += ["--game", "western-showdown-v1", "--bot", HONEST, "--bot", "house:random"]
    argv += ["--rounds", "1", "--store", db, "--local", "--sandbox", "docker"]
    argv += ["--decision-ms", "2000", "--bank-ms", "5000", "--start-ms", "60000"]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    stdout, stderr = proc.communicate(timeout=240)
    assert proc.returncode == 0, stderr
    assert "2 matches recorded here" in stdout

    with Store.open(db) as store:
        results = store.results(season_id="dk1")
        records = [store.match_record(r.match_id) for r in results]
    assert [r.match_id for r in results] == ["dk1-0", "dk1-1"]
    for record in records:
        assert record is not None
        assert record["faults"] == []
        kinds = {s["bot"]: s.get("sandbox", {}).get("kind") for s in record["seats"]}
        assert kinds == {HONEST: "docker", "house:random": None}

    # The local run closed its sandbox: none of its containers (they carry its pid) is left.
    client = docker.from_env()
    try:
        left = client.api.containers(
            all=True, filters={"label": ["saloon=1", f"saloon.pid={proc.pid}"]}
        )
    finally:
        client.close()
    assert left == []
