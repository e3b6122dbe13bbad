"""Generate the Python protocol code in sdk/proto/ from proto/saloon/v1/*.proto.

    .venv/bin/python proto/generate.py           # (re)write sdk/proto/
    .venv/bin/python proto/generate.py --check   # exit 1 when sdk/proto/ is stale

Writes ``<name>_pb2.py`` and its ``.pyi`` stub (mypy-protobuf). No ``_pb2_grpc`` stubs:
the one RPC is bound by hand (saloon.sdk.runtime, saloon.referee.remote) because both ends
move raw bytes, so that a malformed message is classified by the referee instead of
killing the stream. protoc names modules after the .proto path (``saloon.v1``); the code
lives inside the SDK (``saloon.sdk.proto``, a bot image needs only the SDK), so module
references are rewritten. The output depends only on the .proto files and the installed
grpcio-tools / mypy-protobuf versions.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROTO_ROOT = ROOT / "proto"
OUT = ROOT / "sdk" / "proto"
PROTO_PACKAGE = "saloon.v1"
PY_PACKAGE = "saloon.sdk.proto"
INIT = '"""Generated protocol code (proto/generate.py); do not edit."""\n'


def _plugin(name: str) -> str:
    found = Path(sys.executable).parent / name
    path = str(found) if found.exists() else shutil.which(name)
    if path is None:
        raise SystemExit(f"generate.py: {name} not found (pip install mypy-protobuf)")
    return path


def generate(out: Path) -> list[Path]:
    """Write the generated files into ``out``; return their paths, sorted."""
    protos = sorted(p.relative_to(PROTO_ROOT).as_posix() for p in PROTO_ROOT.rglob("*.proto"))
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [
            sys.executable,
            "-m",
            "grpc_tools.protoc",
            f"-I{PROTO_ROOT}",
            f"--plugin=protoc-gen-mypy={_plugin('protoc-gen-mypy')}",
            f"--python_out={tmp}",
            f"--mypy_out={tmp}",
            *protos,
        ]
        done = subprocess.run(cmd, cwd=PROTO_ROOT, capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"generate.py: protoc failed:\n{done.stderr}")
        generated = Path(tmp) / PROTO_PACKAGE.replace(".", "/")
        out.mkdir(parents=True, exist_ok=True)
        written = []
        for src in sorted(generated.iterdir()):
            text = src.read_text(encoding="utf-8")
            text = text.replace(f"from {PROTO_PACKAGE} import", f"from {PY_PACKAGE} import")
            text = text.replace(f"import {PROTO_PACKAGE}.", f"import {PY_PACKAGE}.")
            text = text.replace(f" {PROTO_PACKAGE}.", f" {PY_PACKAGE}.")
            dest = out / src.name
            dest.write_text(text, encoding="utf-8")
            written.append(dest)
        init = out / "__init__.py"
        init.write_text(INIT, encoding="utf-8")
        written.append(init)
    return sorted(written)


def stale_files() -> list[str]:
    """Names of the files in sdk/proto/ that differ from a fresh generation."""
    with tempfile.TemporaryDirectory() as tmp:
        fresh = {p.name: p.read_bytes() for p in generate(Path(tmp))}
    current = {p.name: p.read_bytes() for p in OUT.glob("*.py*")} if OUT.exists() else {}
    return sorted(n for n in fresh.keys() | current.keys() if fresh.get(n) != current.get(n))


def main(argv: list[str] | None = None) -> int:
    """Generate, or with --check report stale files."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail when sdk/proto is stale")
    args = parser.parse_args(argv)
    if args.check:
        stale = stale_files()
        if stale:
            print(f"sdk/proto is stale ({', '.join(stale)}): run proto/generate.py")
            return 1
        print("sdk/proto is up to date")
        return 0
    for path in generate(OUT):
        print(path.relative_to(ROOT))
    return 0


if __name__ == "__main__":
    sys.exit(main())
