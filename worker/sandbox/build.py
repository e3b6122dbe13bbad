"""The build step of a compiled language: once per submitted version, locked down like play.

The version's sources go into a sources image (the runtime image plus ``/bot``, built with
no network, as a bot image is); a container of it runs the language's build command with no
network, a read-only root, every capability dropped, no-new-privileges, memory, CPU and
pids limits, a size-capped tmpfs for its output and one for ``/tmp``, and a wall-clock
limit. The build's messages (its stdout and stderr) are kept up to :data:`BUILD_OUTPUT_CAP`
bytes; what it built comes back as a tar on the container's stdout once it succeeded (the
messages go to stderr), and goes into the bot's image under ``/bot/build``.

A build that fails is refused with the compiler's message, capped, its paths the author's
own (``bot.ts(3,5): error ...``, not ``/bot/bot.ts``); one that overruns its clock or its
output cap, or writes past its tmpfs, is refused as such. Either way nothing is stored:
the containers and the sources image are removed by id.
"""

from __future__ import annotations

import contextlib
import io
import logging
import select
import tarfile
import threading
import time
import uuid
from dataclasses import dataclass
from typing import Any

from saloon.sdk.languages import SPECS
from saloon.worker.errors import BuildFailed, ImageBuildError
from saloon.worker.sandbox.images import BOT_ROOT, LABEL, base_image_id, build_context
from saloon.worker.sandbox.packages import BotPackage
from saloon.worker.sandbox.runtimes import Runtime

log = logging.getLogger(__name__)

#: Where the build writes what it built (a tmpfs of BUILD_OUT_MB).
BUILD_OUT = "/out"
#: Bytes of the build's messages kept (the rest is counted, then the build is ended).
BUILD_OUTPUT_CAP = 256 * 1024
#: Seconds a refused build's container gets to be killed and its output drained.
KILL_DRAIN_S = 30.0
#: Characters of the compiler's message a refusal carries.
MESSAGE_CHARS = 4000


@dataclass(frozen=True)
class BuildLimits:
    """What one build may use."""

    #: Wall-clock seconds from the container's start to its end.
    wall_s: float = 180.0
    memory_mb: int = 1536
    cpus: float = 1.0
    pids: int = 256
    #: The output tmpfs (what the build makes) and /tmp (the compiler's scratch).
    out_mb: int = 256
    tmp_mb: int = 512


DEFAULT_BUILD_LIMITS = BuildLimits()


def build_version(
    client: Any,
    package: BotPackage,
    runtime: Runtime,
    base: str,
    limits: BuildLimits,
    owner: str | None = None,
) -> bytes:
    """Build ``package`` in a locked-down container of ``base``: the tar of what it built.

    ``owner`` (the sandbox's owner id) labels the build's container and sources image
    (``saloon.owner``), as the sandbox labels its bots' containers.
    BuildFailed (a PackageError: the author's) when the build fails, overruns or floods;
    ImageBuildError when the platform could not run it.
    """
    import docker.errors

    step = runtime.build
    if step is None:
        raise ImageBuildError(f"{package.language} has no build step")
    base_image_id(client, base)  # BaseImageMissing now, never a pull attempt by the build
    tag = f"saloon-bot-src:{uuid.uuid4().hex[:16]}"
    labels = {LABEL: "1", "saloon.role": "bot-build"}
    if owner is not None:
        labels["saloon.owner"] = owner
    try:
        client.images.build(
            fileobj=io.BytesIO(build_context(package, base)),
            custom_context=True,
            tag=tag,
            labels=labels,
            rm=True,
            forcerm=True,
            pull=False,
            network_mode="none",
        )
    except (docker.errors.BuildError, docker.errors.APIError) as exc:
        raise ImageBuildError(f"the sources image of {package.version}: {exc}") from None
    try:
        return _run(client, tag, package, step.command(package, BUILD_OUT), step, limits, labels)
    finally:
        try:
            client.images.remove(tag, noprune=False)
        except docker.errors.APIError as exc:  # upkeep: never hides the build's own result
            log.warning("could not remove the sources image %s: %s", tag, exc)


def _run(
    client: Any,
    tag: str,
    package: BotPackage,
    command: list[str],
    step: Any,
    limits: BuildLimits,
    labels: dict[str, str],
) -> bytes:
    import docker.errors
    import docker.types

    # The build's own stdout joins its messages on stderr; the container's stdout then
    # carries only the tar of what it built, written once the build succeeded.
    script = f'"$@" 1>&2 || exit $?; exec tar -C {BUILD_OUT} -cf - .'
    try:
        container = client.containers.create(
            tag,
            command=["sh", "-c", script, "build", *command],
            name=f"saloon-build-{uuid.uuid4().hex[:12]}",
            labels=labels,
            user="10001:10001",
            working_dir=BOT_ROOT,
            environment={"HOME": "/tmp", "TMPDIR": "/tmp"},
            network_mode="none",
            read_only=True,
            tmpfs={
                "/tmp": f"size={limits.tmp_mb}m,mode=1777,nosuid,nodev",
                BUILD_OUT: f"size={limits.out_mb}m,mode=1777,nosuid,nodev",
            },
            cap_drop=["ALL"],
            security_opt=["no-new-privileges"],
            mem_limit=f"{limits.memory_mb}m",
            memswap_limit=f"{limits.memory_mb}m",
            nano_cpus=int(limits.cpus * 1_000_000_000),
            pids_limit=limits.pids,
            log_config=docker.types.LogConfig(type="none"),
            init=True,
        )
    except docker.errors.APIError as exc:
        raise ImageBuildError(f"could not create the build container: {exc}") from None
    try:
        return _collect(client, container, package, step, limits)
    finally:
        try:
            container.remove(force=True, v=True)
        except docker.errors.APIError as exc:
            log.warning("could not remove build container %s: %s", container.id[:12], exc)


def _collect(
    client: Any, container: Any, package: BotPackage, step: Any, limits: BuildLimits
) -> bytes:
    sock = client.api.attach_socket(container.id, {"stdout": 1, "stderr": 1, "stream": 1})
    out = io.BytesIO()
    messages = bytearray()
    why = ""
    started = time.monotonic()
    container.start()
    try:
        why = _read_frames(sock, out, messages, started + limits.wall_s, limits)
        if why:
            # The engine ends a container only once its output is read: kill it while the
            # rest of what it writes is read and dropped (a bounded time).
            killer = threading.Thread(target=_kill, args=(container,), name="build-kill")
            killer.start()
            _drain(sock, time.monotonic() + KILL_DRAIN_S)
            killer.join(KILL_DRAIN_S)
    finally:
        with contextlib.suppress(OSError):
            sock.close()
    status = container.wait(timeout=KILL_DRAIN_S)
    code = int(status.get("StatusCode", -1))
    seconds = time.monotonic() - started
    text = _authors(bytes(messages[:BUILD_OUTPUT_CAP]).decode("utf-8", "replace"), step)
    label = SPECS[package.language].label  # the name people read: "C++ build refused: ..."
    if why:
        raise BuildFailed(f"{label} build refused: {why}{_tail(text)}")
    if code != 0:
        oom = code == 137 and container.attrs.get("State", {}).get("OOMKilled")
        cause = "ran out of memory" if oom else f"failed (exit {code})"
        raise BuildFailed(f"{label} build {cause}{_tail(text)}")
    data = out.getvalue()
    try:
        with tarfile.open(fileobj=io.BytesIO(data)) as tar:
            names = [m.name for m in tar.getmembers() if m.isfile()]
    except tarfile.TarError:
        raise BuildFailed(f"{label} build made no readable output{_tail(text)}") from None
    if not names:
        raise BuildFailed(f"{label} build made nothing{_tail(text)}")
    log.info(
        "built %s (%s) in %.1f s: %d files", package.version, package.language, seconds, len(names)
    )
    return data


def _read_frames(
    sock: Any, out: io.BytesIO, messages: bytearray, deadline: float, limits: BuildLimits
) -> str:
    """Read the attach stream's frames (8-byte header: stream, 3 zero bytes, big-endian
    size; then the payload) into ``out`` (stdout) and ``messages`` (stderr) until it ends;
    "" then, else why it was cut short (its clock, its output caps)."""
    buffer = bytearray()
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return f"the build ran past its {limits.wall_s:g} s limit"
        ready, _, _ = select.select([sock], [], [], min(left, 1.0))
        if not ready:
            continue
        chunk = sock.read(65536)
        if not chunk:
            return ""
        buffer += chunk
        while len(buffer) >= 8:
            size = int.from_bytes(buffer[4:8], "big")
            if len(buffer) < 8 + size:
                break
            payload = bytes(buffer[8 : 8 + size])
            if buffer[0] == 1:
                out.write(payload)
            else:
                messages += payload
            del buffer[: 8 + size]
        if len(messages) > BUILD_OUTPUT_CAP:
            return f"the build wrote more than {BUILD_OUTPUT_CAP} bytes of messages"
        if out.tell() > limits.out_mb * 1024 * 1024:
            return f"the build made more than {limits.out_mb} MiB"


def _drain(sock: Any, deadline: float) -> None:
    """Read and drop what is left of the attach stream, until it ends or ``deadline``."""
    while time.monotonic() < deadline:
        ready, _, _ = select.select([sock], [], [], 0.5)
        if ready and not sock.read(1 << 20):
            return


def _kill(container: Any) -> None:
    import docker.errors

    with contextlib.suppress(docker.errors.APIError):  # already ended
        container.kill()


def _authors(text: str, step: Any) -> str:
    """The compiler's messages with the sources' folder left out of every path."""
    return text.replace(step.source_prefix, "")


def _tail(text: str) -> str:
    """The compiler's messages for a refusal: the first ones (they name the first error)."""
    text = text.strip()
    if not text:
        return ""
    if len(text) > MESSAGE_CHARS:
        text = text[:MESSAGE_CHARS] + "\n..."
    return ":\n" + text
