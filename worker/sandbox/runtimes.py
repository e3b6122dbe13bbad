"""Bot runtimes by language: the image a bot's image is built on, and how it serves.

Each language has one runtime image (Python's is the bot base image, :func:`images.base_tag`;
JavaScript and TypeScript share the Node.js image of ``kits/js``), tagged by a hash of its
inputs, so a changed runtime never runs in a stale image. A compiled language also has a
build step (:class:`BuildStep`), run once per submitted version in a locked-down container
of its image (:mod:`saloon.worker.sandbox.build`); what it builds goes into the bot's image
beside the sources.

``python -m saloon.worker.sandbox.runtimes --tag LANGUAGE`` prints a runtime's image tag;
``--build-script LANGUAGE`` the script that builds it offline (deploy/dev.sh uses both).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from saloon.kits import kit_dir, kit_hash
from saloon.sdk.languages import SPECS, Language
from saloon.worker.errors import UnsupportedLanguage
from saloon.worker.sandbox.images import BOT_ROOT, base_tag
from saloon.worker.sandbox.packages import BotPackage

#: A hidden file in a stored version's unpacked folder: the runtime image tag the version
#: was built and qualified on (its meta's ``runtime``). The Docker sandbox builds the bot's
#: image on that tag, so upgrading a runtime never changes how a stored version plays.
#: Hidden files are no part of a package: the version's content is unchanged by it.
PINNED_RUNTIME = ".saloon-runtime"


def pinned_runtime(bot_path: str) -> str | None:
    """The runtime tag pinned beside an unpacked stored version, if any."""
    path = Path(bot_path)
    marker = (path if path.is_dir() else path.parent) / PINNED_RUNTIME
    try:
        return marker.read_text(encoding="utf-8").strip() or None
    except OSError:
        return None


def version_language(meta: dict[str, object]) -> str:
    """A stored version's language (versions stored before languages were Python)."""
    return str(meta.get("language") or Language.PYTHON.value)


#: Where a compiled version's build output sits inside its image.
BUILD_ROOT = f"{BOT_ROOT}/build"
#: Where the Node.js runtime lives inside its image.
JS_HOME = "/opt/saloon/js"
#: Where the Go runtime (GOPATH, build script, precompiled build cache) lives in its image.
GO_HOME = "/opt/saloon/go"
#: Where the C++ runtime (headers, libsaloon.a, build script) lives in its image.
CPP_HOME = "/opt/saloon/cpp"
#: Where the Java runtime (saloon.jar, the JVM's options, the build script) lives in its image.
JAVA_KIT = "/opt/saloon/java"


@dataclass(frozen=True)
class BuildStep:
    """How a compiled language builds a version: ``command`` runs in a container of the
    runtime image with the sources at ``BOT_ROOT`` (read-only) and writes what runs to
    ``out`` (a size-capped tmpfs); ``where`` maps a compiler message's paths back to the
    author's own (``/bot/bot.ts(3,5)`` -> ``bot.ts(3,5)``)."""

    command: Callable[[BotPackage, str], list[str]]
    #: What the compiler's messages call the sources' folder (stripped from them).
    source_prefix: str = f"{BOT_ROOT}/"


@dataclass(frozen=True)
class Runtime:
    """One language's runtime: its image, how it serves a bot, how it builds one."""

    languages: tuple[Language, ...]
    #: The kit folder its image is built from (None: the Python bot base image).
    kit: str | None
    #: The image repository (the tag adds the version and a hash of the inputs).
    repository: str
    #: The argv serving ``package`` (its files at BOT_ROOT) on the unix socket ``socket``.
    serve: Callable[[BotPackage, str], list[str]]
    #: The build step of a compiled language, None for one that runs its sources.
    build: BuildStep | None = None

    def tag(self) -> str:
        """The image tag this code needs for the runtime."""
        if self.kit is None:
            return base_tag()
        return f"{self.repository}:{_version()}-{kit_hash(self.kit)}"

    def build_script(self) -> Path | None:
        """The script that builds the image offline (None: deploy/bot-image's)."""
        return None if self.kit is None else kit_dir(self.kit) / "build-offline.sh"


def _version() -> str:
    try:
        return version("saloon-arena")
    except PackageNotFoundError:
        return "0+unknown"


def _python_serve(package: BotPackage, socket: str) -> list[str]:
    return ["python3", "-m", "saloon.sdk.run", package.runtime_path(BOT_ROOT), "--socket", socket]


def _js_entry(package: BotPackage) -> str:
    """The JavaScript file a Node.js runtime loads: the entry, or for TypeScript what the
    build step compiled it to."""
    if package.language is Language.TYPESCRIPT:
        return f"{BUILD_ROOT}/{package.entry.removesuffix('.ts')}.js"
    return f"{BOT_ROOT}/{package.entry}"


def _js_serve(package: BotPackage, socket: str) -> list[str]:
    return ["node", f"{JS_HOME}/run.js", _js_entry(package), "--socket", socket]


def _ts_build(package: BotPackage, out: str) -> list[str]:
    # The compiler's settings are the kit's (tsconfig.json: strict, commonjs, the "saloon"
    # types); this config only says where the sources and the output are.
    config = (
        f'{{"extends": "{JS_HOME}/tsconfig.json", "compilerOptions": '
        f'{{"rootDir": "{BOT_ROOT}", "outDir": "{out}", "typeRoots": []}}, '
        f'"include": ["{BOT_ROOT}/**/*.ts"]}}'
    )
    return [
        "sh",
        "-c",
        'printf "%s" "$0" > /tmp/tsconfig.json && exec node '
        f"{JS_HOME}/node_modules/typescript/bin/tsc -p /tmp/tsconfig.json",
        config,
    ]


def _go_serve(package: BotPackage, socket: str) -> list[str]:
    return [f"{BUILD_ROOT}/bot", "--socket", socket]


def _go_build(package: BotPackage, out: str) -> list[str]:
    # kits/go/build.sh: `go build` of the entry's package (GOPATH mode, offline) with the
    # program's main added, from the image's precompiled cache; the binary is OUT/bot.
    folder = package.entry.rpartition("/")[0] or "."
    return ["sh", f"{GO_HOME}/build.sh", out, folder]


def _cpp_serve(package: BotPackage, socket: str) -> list[str]:
    return [f"{BUILD_ROOT}/bot", "--socket", socket]


def _cpp_build(package: BotPackage, out: str) -> list[str]:
    # kits/cpp/build.sh: g++ on the C++ files of the entry's folder, linked with the image's
    # precompiled runtime library (the program's main) and gRPC; the binary is OUT/bot.
    folder = package.entry.rpartition("/")[0] or "."
    return ["sh", f"{CPP_HOME}/build.sh", out, folder]


def _java_serve(package: BotPackage, socket: str) -> list[str]:
    # kits/java/jvm.args: the JVM sized from the container's memory cap (a share of it for
    # the heap), one that starts fast; the bot's class is the one its jar's manifest names.
    jar = f"{BUILD_ROOT}/bot.jar"
    return [
        "java",
        f"@{JAVA_KIT}/jvm.args",
        "-cp",
        f"{JAVA_KIT}/saloon.jar:{jar}",
        "saloon.Main",
        "--jar",
        jar,
        "--socket",
        socket,
    ]


def _java_build(package: BotPackage, out: str) -> list[str]:
    # kits/java/build.sh: javac of the package's .java files against the runtime's jar, then
    # OUT/bot.jar with the entry's class as its Main-Class.
    return ["sh", f"{JAVA_KIT}/build.sh", out, package.entry]


PYTHON = Runtime((Language.PYTHON,), None, "saloon-bot-base", _python_serve)
NODE = Runtime(
    (Language.JAVASCRIPT, Language.TYPESCRIPT),
    "js",
    "saloon-bot-js",
    _js_serve,
)
NODE_TS = Runtime((Language.TYPESCRIPT,), "js", "saloon-bot-js", _js_serve, BuildStep(_ts_build))
GO = Runtime((Language.GO,), "go", "saloon-bot-go", _go_serve, BuildStep(_go_build))
CPP = Runtime((Language.CPP,), "cpp", "saloon-bot-cpp", _cpp_serve, BuildStep(_cpp_build))
JAVA = Runtime((Language.JAVA,), "java", "saloon-bot-java", _java_serve, BuildStep(_java_build))

#: Every language's runtime (a language missing here is refused at submission).
RUNTIMES: dict[Language, Runtime] = {
    Language.PYTHON: PYTHON,
    Language.JAVASCRIPT: NODE,
    Language.TYPESCRIPT: NODE_TS,
    Language.GO: GO,
    Language.CPP: CPP,
    Language.JAVA: JAVA,
}


def runtime_for(language: Language) -> Runtime:
    """The runtime of ``language``; UnsupportedLanguage when this arena has none."""
    runtime = RUNTIMES.get(language)
    if runtime is None:
        have = ", ".join(SPECS[lang].label for lang in RUNTIMES)
        raise UnsupportedLanguage(
            f"no runtime for {SPECS[language].label} bots on this arena (it runs {have})"
        )
    return runtime


def main(argv: list[str] | None = None) -> int:
    """Print a runtime's image tag or offline build script."""
    parser = argparse.ArgumentParser(prog="python -m saloon.worker.sandbox.runtimes")
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--tag", metavar="LANGUAGE", help="the runtime image's tag")
    what.add_argument("--build-script", metavar="LANGUAGE", help="its offline build script")
    what.add_argument("--kits", action="store_true", help="the runtime images built from kits")
    args = parser.parse_args(argv)
    if args.kits:
        seen: set[str] = set()
        for runtime in RUNTIMES.values():
            if runtime.kit is not None and runtime.kit not in seen:
                seen.add(runtime.kit)
                print(f"{runtime.tag()} {runtime.build_script()}")
        return 0
    runtime = runtime_for(Language(args.tag or args.build_script))
    print(runtime.tag() if args.tag else (runtime.build_script() or ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
