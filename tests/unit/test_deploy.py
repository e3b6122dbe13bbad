"""deploy/compose*.yaml, deploy/Dockerfile and docs/operator-guide.md agree with the code:
every `saloon` command they run parses with the real ``saloon`` argument parser, the
services that start bots reach the host's Docker engine, and the pieces point at each other.

Docker cannot pull images here, so this is what can be checked without running them. The
compose files are read by a small reader of the YAML subset they are kept to (block
mappings and lists of scalars); when PyYAML is installed, the reader's output is compared
with PyYAML's too.
"""

from __future__ import annotations

import itertools
import re
import shlex
from pathlib import Path
from typing import Any

import pytest

from saloon.arena.cli import build_parser
from saloon.referee.cli import UsageError
from tests.integration.rehearsal import ENGINE_MOUNTS, Rehearsal

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
COMPOSE_FILES = ("compose.yaml", "compose.worker.yaml")
BOT_STARTERS = {"arena", "worker", "saloon-platform:0.1.0"}
#: What runs `saloon` in the guide: compose services, the platform image by name or as
#: the rehearsal's $PLATFORM.
SALOON_RUNNERS = BOT_STARTERS | {"$PLATFORM"}


# -- a reader of the YAML subset the compose files use -----------------------------------


def _scalar(text: str) -> str | None:
    text = text.strip()
    if text == "":
        return None
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        return text[1:-1]
    return text


_KEY = re.compile(r"^([A-Za-z_][\w.-]*):(?: (.*))?$")


def read_yaml_subset(text: str) -> Any:
    """Block mappings and block lists of scalars; full-line comments; nothing else."""
    lines = [
        (len(raw) - len(raw.lstrip(" ")), raw.strip())
        for raw in text.splitlines()
        if raw.strip() and not raw.lstrip().startswith("#")
    ]
    for _indent, line in lines:
        assert "\t" not in line and not line.startswith(("&", "*", "{", "[", "|", ">")), line

    def block(i: int, indent: int) -> tuple[Any, int]:
        if lines[i][1].startswith("- "):
            items: list[Any] = []
            while i < len(lines) and lines[i][0] == indent and lines[i][1].startswith("- "):
                item = lines[i][1][2:]
                assert not _KEY.match(item), f"lists of mappings are not in the subset: {item}"
                items.append(_scalar(item))
                i += 1
            return items, i
        mapping: dict[str, Any] = {}
        while i < len(lines) and lines[i][0] == indent:
            match = _KEY.match(lines[i][1])
            assert match, f"not a mapping entry: {lines[i][1]!r}"
            key, value = match.group(1), match.group(2)
            i += 1
            if value is not None and value.strip():
                mapping[key] = _scalar(value)
            elif i < len(lines) and lines[i][0] > indent:
                mapping[key], i = block(i, lines[i][0])
            elif i < len(lines) and lines[i][0] == indent and lines[i][1].startswith("- "):
                mapping[key], i = block(i, indent)  # a list at its key's own indent
            else:
                mapping[key] = None
        return mapping, i

    node, end = block(0, 0)
    assert end == len(lines), f"unread from line {lines[end]}"
    return node


def _plain(node: Any) -> Any:
    """PyYAML's values as the subset reader's (every scalar a string)."""
    if isinstance(node, dict):
        return {str(k): _plain(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_plain(v) for v in node]
    return None if node is None else str(node)


def load_compose(name: str) -> dict[str, Any]:
    text = (DEPLOY / name).read_text()
    data = read_yaml_subset(text)
    try:
        import yaml  # type: ignore[import-untyped]
    except ImportError:
        pass
    else:
        assert _plain(yaml.safe_load(text)) == data
    assert isinstance(data, dict)
    return data


# -- compose variables ---------------------------------------------------------------------

_VAR = re.compile(r"\$\{([A-Z_][A-Z0-9_]*)(?:(:?[-?])([^}]*))?\}")


def env_example() -> dict[str, str]:
    out = {}
    for line in (DEPLOY / "env.example").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            key, _, value = line.partition("=")
            out[key.strip()] = value.strip()
    return out


def interpolate(text: str, env: dict[str, str]) -> str:
    """Compose's ${VAR}, ${VAR:-default} and ${VAR:?error}, with ``env``."""

    def one(m: re.Match[str]) -> str:
        name, op, arg = m.group(1), m.group(2), m.group(3)
        if env.get(name):
            return env[name]
        if op in (":-", "-"):
            return arg
        raise AssertionError(f"${{{name}}} is not in deploy/env.example")

    return _VAR.sub(one, text)


def services() -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (file, name, service)
        for file in COMPOSE_FILES
        for name, service in load_compose(file)["services"].items()
    ]


def saloon_args(service: dict[str, Any]) -> list[str] | None:
    command = service.get("command")
    if not command or command[0] != "saloon":
        return None
    env = env_example()
    return [interpolate(str(part), env) for part in command[1:]]


def parse_saloon(argv: list[str]) -> Any:
    try:
        return build_parser().parse_args(argv)
    except UsageError as exc:
        raise AssertionError(f"`saloon {shlex.join(argv)}` does not parse: {exc}") from None


# -- the tests -----------------------------------------------------------------------------


def test_the_subset_reader_reads_what_it_should() -> None:
    text = "a:\n  b: 1\n  c:\n    - x\n    - \"y: z\"\n  d:\n  - p\ne: 'q'\n"
    assert read_yaml_subset(text) == {"a": {"b": "1", "c": ["x", "y: z"], "d": ["p"]}, "e": "q"}


@pytest.mark.parametrize("file", COMPOSE_FILES)
def test_every_compose_variable_is_in_env_example(file: str) -> None:
    text = (DEPLOY / file).read_text()
    needed = {m.group(1) for m in _VAR.finditer(text) if m.group(2) in (None, ":?", "?")}
    assert needed <= set(env_example()), needed - set(env_example())


def test_every_saloon_command_in_the_compose_files_parses() -> None:
    seen = {}
    for file, name, service in services():
        argv = saloon_args(service)
        if argv is None:
            continue
        args = parse_saloon(argv)
        seen[(file, name)] = args
    assert {k for k, _ in seen} == set(COMPOSE_FILES)
    serve = seen[("compose.yaml", "arena")]
    assert serve.command == "serve"
    assert serve.store.startswith("postgresql+psycopg://") and "@postgres:5432/" in serve.store
    assert serve.redis.startswith("redis://") and serve.sandbox == "docker"
    assert serve.season_sandbox == "docker"
    assert serve.listen == "0.0.0.0:50051" and serve.http == "0.0.0.0:8080"
    for key in (("compose.yaml", "worker"), ("compose.worker.yaml", "worker")):
        worker = seen[key]
        assert worker.command == "worker"
        # Workers take jobs off the queue the service puts them on.
        assert worker.redis == serve.redis and worker.queue == [serve.queue]


def test_the_services_that_start_bots_reach_the_hosts_docker_engine() -> None:
    for file, name, service in services():
        if name not in BOT_STARTERS:
            continue
        volumes = service["volumes"]
        assert "/var/run/docker.sock:/var/run/docker.sock" in volumes, (file, name)
        assert "/var/lib/docker/volumes:/var/lib/docker/volumes:rslave" in volumes, (file, name)
        assert service["image"] == "saloon-platform:0.1.0"
        assert "hostname" not in service and "network_mode" not in service  # see the guide
        if "build" in service:
            assert service["build"] == {"context": "..", "dockerfile": "deploy/Dockerfile"}


def test_the_ports_and_healthcheck_match_the_service_flags() -> None:
    compose = load_compose("compose.yaml")
    arena = compose["services"]["arena"]
    ports = [p.rsplit(":", 2)[-2:] for p in arena["ports"]]
    assert ["50051", "50051"] in ports and ["8080", "8080"] in ports
    assert "/healthz" in " ".join(arena["healthcheck"]["test"])
    assert set(compose["services"]) == {"postgres", "redis", "arena", "worker", "prometheus"}
    assert arena["depends_on"]["postgres"]["condition"] == "service_healthy"
    workers = load_compose("compose.worker.yaml")["services"]["worker"]
    hosts = {h.split(":", 1)[0] for h in workers["extra_hosts"]}
    assert hosts == {"postgres", "redis"}  # the names in the store and queue URLs


def test_the_platform_image_installs_the_pinned_arena_extra() -> None:
    text = (DEPLOY / "Dockerfile").read_text()
    froms = re.findall(r"^FROM (\S+)", text, flags=re.M)
    assert froms and all(f == "python:3.11-slim" for f in froms)
    assert "-c /tmp/constraints.txt" in text and "[arena]" in text
    assert "COPY deploy/constraints.txt" in text
    ignore = (DEPLOY / "Dockerfile.dockerignore").read_text().split()
    for needed in re.findall(r"^COPY (?!--from)(\S+)", text, flags=re.M):
        assert f"!{needed}" in ignore, needed


def _guide_commands() -> list[list[str]]:
    """The `saloon ...` command lines in the operator guide's shell blocks."""
    text = (ROOT / "docs" / "operator-guide.md").read_text()
    out = []
    for block in re.findall(r"```sh\n(.*?)```", text, flags=re.S):
        for line in block.replace("\\\n", " ").splitlines():  # continued lines joined
            line = line.split(" #", 1)[0].strip()
            words = shlex.split(line) if line and not line.startswith("#") else []
            # `saloon ...`, or `docker compose ... run --rm arena saloon ...`
            for i, word in enumerate(words):
                if word == "saloon" and (i == 0 or words[i - 1] in SALOON_RUNNERS):
                    out.append(words[i + 1 :])
    return out


def test_every_saloon_command_in_the_operator_guide_parses() -> None:
    commands = _guide_commands()
    assert len(commands) >= 6
    for argv in commands:
        parse_saloon(argv)
    assert {argv[0] for argv in commands} >= {"user", "season", "submit"}


def _options(argv: list[str]) -> dict[str, list[str]]:
    """``-v``/``-e``/``--restart`` values of a `docker run` command line."""
    out: dict[str, list[str]] = {}
    for flag, value in itertools.pairwise(argv):
        if flag in ("-v", "-e", "--restart"):
            out.setdefault(flag, []).append(value)
    return out


def test_the_rehearsal_runs_compose_yamls_worker_on_hosts_of_its_own() -> None:
    """tests/integration/test_multi_host.py's workers are compose.yaml's worker service,
    but for a host name each and the host's network (the guide says why)."""
    worker = load_compose("compose.yaml")["services"]["worker"]
    argv = Rehearsal.placeholders().worker("a")
    image = argv.index("$PLATFORM")
    run, command = argv[:image], argv[image + 1 :]
    compose_command = [interpolate(str(part), env_example()) for part in worker["command"]]
    # The same command, options and values but for the URLs and the queue's name.
    assert [w for w in command if w.startswith("-")] == [
        w for w in compose_command if w.startswith("-")
    ]
    assert command[:2] == compose_command[:2] == ["saloon", "worker"]
    assert command[command.index("--max-jobs") + 1] == "500"
    assert compose_command[compose_command.index("--max-jobs") + 1] == "500"
    options = _options(run)
    mounts = options["-v"]
    for volume in worker["volumes"]:
        if volume.startswith("packages:"):
            assert f"$RUN-{volume}" in mounts  # the package cache: a volume of its own
        else:
            assert volume in mounts
    assert [m for m in mounts if "docker" in m] == list(ENGINE_MOUNTS[1::2])
    assert options["-e"] == [f"{k}={v}" for k, v in worker["environment"].items()]
    assert options["--restart"] == [worker["restart"]]
    assert "--hostname" in run and run[run.index("--network") + 1] == "host"


def _rehearsal_section() -> str:
    text = (ROOT / "docs" / "operator-guide.md").read_text()
    section = text.split("### Rehearsing it on one machine", 1)[1].split("\n## ", 1)[0]
    block = re.findall(r"```sh\n(.*?)```", section, flags=re.S)[0]
    lines = block.replace("\\\n", " ").splitlines()  # continued lines joined
    return "\n".join(" ".join(line.split(" #", 1)[0].split()) for line in lines)


def test_the_operator_guide_gives_exactly_the_rehearsals_commands() -> None:
    """Each command the rehearsal test runs is in the guide's block, options included,
    in the order it runs them, and the block has no other command."""
    block = _rehearsal_section()
    lines = block.splitlines()
    commands = Rehearsal.placeholders().commands("$WORKER_A", "$WORKER_B")
    at = []
    for argv in commands:
        wanted = " ".join(argv)
        found = [i for i, line in enumerate(lines) if line.endswith((wanted, wanted + ")"))]
        assert found, f"not in docs/operator-guide.md's rehearsal block: {wanted}"
        at.append(next(i for i in found if not at or i > at[-1]))
    # The first two lines build the image: every other line is one of the commands.
    assert lines[:2] == [
        "PLATFORM=$(bash deploy/platform-image/source-hash.sh --tag)",
        "bash deploy/platform-image/build-offline.sh $PLATFORM",
    ]
    assert at == list(range(2, len(lines)))
