"""Generate the Python protocol code from proto/saloon/v1/*.proto.

    .venv/bin/python proto/generate.py           # (re)write sdk/proto/ and sdk/arena_proto/
    .venv/bin/python proto/generate.py --check   # exit 1 when either is stale

* ``bot.proto`` -> ``saloon.sdk.proto`` (sdk/proto/): ``<name>_pb2.py`` and its ``.pyi`` stub
  (mypy-protobuf). No ``_pb2_grpc`` stubs: the one RPC is bound by hand
  (saloon.sdk.runtime, saloon.referee.remote) because both ends move raw bytes, so that a
  malformed message is classified by the referee instead of killing the stream.
* ``arena.proto`` -> ``saloon.sdk.arena_proto`` (sdk/arena_proto/): messages and the
  generated gRPC stubs. A package of its own so that bot images leave it out (the base
  image build drops it; a bot talks the bot protocol only).

protoc names modules after the .proto path (``saloon.v1``); the code lives inside the SDK,
so module references are rewritten. The output depends only on the .proto files and the
installed grpcio-tools / mypy-protobuf versions.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROTO_ROOT = ROOT / "proto"
PROTO_PACKAGE = "saloon.v1"
INIT = '"""Generated protocol code (proto/generate.py); do not edit."""\n'


@dataclass(frozen=True)
class Target:
    """Some .proto files and the Python package their generated code goes to."""

    protos: tuple[str, ...]
    out: Path
    package: str
    #: Also generate ``_pb2_grpc`` stubs (the arena API; the bot protocol binds by hand).
    grpc: bool


TARGETS = (
    Target(("saloon/v1/bot.proto",), ROOT / "sdk" / "proto", "saloon.sdk.proto", grpc=False),
    Target(
        ("saloon/v1/arena.proto",), ROOT / "sdk" / "arena_proto", "saloon.sdk.arena_proto", True
    ),
)


def _plugin(name: str) -> str:
    found = Path(sys.executable).parent / name
    path = str(found) if found.exists() else shutil.which(name)
    if path is None:
        raise SystemExit(f"generate.py: {name} not found (pip install mypy-protobuf)")
    return path


def _check_targets() -> None:
    every = {p.relative_to(PROTO_ROOT).as_posix() for p in PROTO_ROOT.rglob("*.proto")}
    covered = {proto for target in TARGETS for proto in target.protos}
    if every != covered:
        raise SystemExit(f"generate.py: .proto files without a target: {sorted(every - covered)}")


def generate(target: Target, out: Path) -> list[Path]:
    """Write ``target``'s generated files into ``out``; return their paths, sorted."""
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [
            sys.executable,
            "-m",
            "grpc_tools.protoc",
            f"-I{PROTO_ROOT}",
            f"--plugin=protoc-gen-mypy={_plugin('protoc-gen-mypy')}",
            f"--python_out={tmp}",
            f"--mypy_out={tmp}",
        ]
        if target.grpc:
            cmd += [
                f"--plugin=protoc-gen-mypy_grpc={_plugin('protoc-gen-mypy_grpc')}",
                f"--grpc_python_out={tmp}",
                f"--mypy_grpc_out={tmp}",
            ]
        done = subprocess.run(
            [*cmd, *target.protos], cwd=PROTO_ROOT, capture_output=True, text=True
        )
        if done.returncode != 0:
            raise SystemExit(f"generate.py: protoc failed:\n{done.stderr}")
        generated = Path(tmp) / PROTO_PACKAGE.replace(".", "/")
        out.mkdir(parents=True, exist_ok=True)
        written = []
        for src in sorted(generated.iterdir()):
            text = src.read_text(encoding="utf-8")
            text = text.replace(f"from {PROTO_PACKAGE} import", f"from {target.package} import")
            text = text.replace(f"import {PROTO_PACKAGE}.", f"import {target.package}.")
            text = text.replace(f" {PROTO_PACKAGE}.", f" {target.package}.")
            dest = out / src.name
            dest.write_text(text, encoding="utf-8")
            written.append(dest)
        init = out / "__init__.py"
        init.write_text(INIT, encoding="utf-8")
        written.append(init)
    return sorted(written)


def stale_files() -> list[str]:
    """Names of the generated files that differ from a fresh generation."""
    _check_targets()
    stale = []
    for target in TARGETS:
        with tempfile.TemporaryDirectory() as tmp:
            fresh = {p.name: p.read_bytes() for p in generate(target, Path(tmp))}
        out = target.out
        current = {p.name: p.read_bytes() for p in out.glob("*.py*")} if out.exists() else {}
        rel = out.relative_to(ROOT).as_posix()
        names = fresh.keys() | current.keys()
        stale += [f"{rel}/{n}" for n in sorted(names) if fresh.get(n) != current.get(n)]
    return stale


def main(argv: list[str] | None = None) -> int:
    """Generate, or with --check report stale files."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--check", action="store_true", help="fail when the generated code is stale"
    )
    args = parser.parse_args(argv)
    if args.check:
        stale = stale_files()
        if stale:
            print(f"generated code is stale ({', '.join(stale)}): run proto/generate.py")
            return 1
        print("generated code is up to date")
        return 0
    _check_targets()
    for target in TARGETS:
        for path in generate(target, target.out):
            print(path.relative_to(ROOT))
    return 0


if __name__ == "__main__":
    sys.exit(main())
