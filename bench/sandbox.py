"""Sandbox speed: cold container start, warm-pool match throughput, gVisor against runc,
and what keeping duplicate deals apart costs the warm pool.

    .venv/bin/python bench/sandbox.py [--matches 10] [--cold 5] [--no-gvisor]
        [--dup-rounds 4] [--dup-seasons 3] [--only-duplicate] [--only-languages]
        [--languages python,java]

Needs a Docker engine and the bot base image (bash deploy/dev.sh test builds both). Every
bot seat is the same small bot package (first legal action), so the figures are the
sandbox's cost, not a bot's thinking. Prints three tables, each figure beside what it is
compared with, measured in the same run:

1. Cold start: from a seat's launch (``docker create`` + start of a new container of an
   image already built) to its first decision answered; medians of ``--cold`` starts.
2. Matches per minute per game: process bots (a new runtime process per seat and match,
   the local process sandbox) against the Docker sandbox with its warm pool (each seat's
   container and channel kept across matches), and the ratio (target >= 0.8x).
3. gVisor (runsc) against runc: the median warm match time per game and the ratio
   (target <= 1.3x).
4. A duplicate season in the Docker sandbox, with deals kept apart (every seat names its
   match's deal, the seed, and gets a runtime that never played it: what a worker does)
   against today's warm pool before that rule (seats naming no deal: any warm runtime of
   the version), each season on a new sandbox, so its cold starts count: Seas of Strife,
   3 seats, three bot versions, ``--dup-rounds`` deals of 3 rotations, played match by
   match alternately on the two sandboxes (which goes first alternates too). Per kind the
   median over ``--dup-seasons`` seasons of the season's wall time, of its median match,
   and the containers it started; the ratio of kept-apart to today's; and the wall time
   kept-apart adds per container it starts beyond today's (a cold start, paid once per
   bot version, rotation and worker: the longer the season, the less it weighs).
5. Each language's runtime beside Python's (``--only-languages`` alone): the same bot
   (first legal action) in each language whose runtime image is built, in the Docker
   sandbox: a version's build (its image, and for a compiled language its build step), the
   cold start (a new container to its first decision answered) and the decision round trip
   (the referee's decide() on a running runtime: request out, answer in), over ``--cold``
   Seizure matches per language played in turn, so a noisy neighbour hits each alike; each
   runtime's median and its ratio to Python's (target: <= 1.1x). ``--languages`` names
   the ones to measure (Python's always, as the reference), by a manifest's names or
   ``saloon new --lang``'s (``js``, ``ts``, ``c++``...; an unknown one is refused, and one
   asked for without a bot in the table or an image here is named); ``--reading`` gives each bot
   (Python's and Java's) a read of its observation and legal actions through its typed
   view first, so the JSON decoding a real bot pays is in the round trip: both decode the
   whole observation (Python's ``decision.observation``, parsed and typed when first
   read; Java's ``View.of(d)``) and type the legal actions (Python's always are; Java's
   by the decision's kind, ``v.legalPlayCard()`` and the like, as a bot does).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
import uuid
from pathlib import Path

from rich.console import Console
from rich.table import Table

from saloon.referee.limits import MatchLimits
from saloon.referee.match import play_match
from saloon.referee.seats import DecisionRequest, EndInfo, Seat, StartInfo
from saloon.sdk.languages import Language, ManifestError, language_named
from saloon.worker.sandbox.base import Sandbox
from saloon.worker.sandbox.docker import DockerSandbox
from saloon.worker.sandbox.packages import load_package
from saloon.worker.sandbox.process import ProcessSandbox
from saloon.worker.seasons.schedule import SeasonSpec, expand

LIMITS = MatchLimits(decision_ms=10_000, bank_ms=60_000, start_ms=60_000)
#: Seats per game (the smallest table each game takes).
GAMES = {"seizure-v1": 2, "western-showdown-v1": 2, "seas-of-strife-v1": 3}
BOT = "def act(decision):\n    return decision.legal[0]\n"
#: Table 5's bot in each language: the entry file and its text (first legal action).
LANGUAGE_BOTS = {
    "python": ("bot.py", BOT),
    "go": (
        "bot.go",
        'package main\n\nimport "saloon"\n\nfunc Act(d saloon.Decision) int { return 0 }\n',
    ),
    "javascript": ("bot.js", "exports.act = (decision) => decision.legal[0];\n"),
    "cpp": (
        "bot.cpp",
        "#include <saloon/saloon.hpp>\n\nint saloon::act(const saloon::Decision&) { return 0; }\n",
    ),
    "java": (
        "Bot.java",
        "public final class Bot implements saloon.Bot {\n"
        "    public int act(saloon.Decision d) { return 0; }\n}\n",
    ),
}


#: ``--reading``: the same, each bot reading its observation and the legal actions through
#: its language's typed view first (what a real bot pays for the JSON), where written.
READING_BOTS = {
    "python": (
        "bot.py",
        "def act(decision):\n"
        "    observation = decision.observation\n"
        "    return decision.legal[0] if observation is not None else decision.legal[1]\n",
    ),
    # The legal actions typed by the decision's kind, as Python's are (and a bot does).
    "java": (
        "Bot.java",
        "import java.util.List;\n"
        "import saloon.games.seizure_v1.View;\n\n"
        "public final class Bot implements saloon.Bot {\n"
        "    public int act(saloon.Decision d) {\n"
        "        View.Decision v = View.of(d);\n"
        "        List<?> legal = switch (d.kind) {\n"
        "            case View.PLAY_CARD -> v.legalPlayCard();\n"
        "            case View.DRAW -> v.legalDraw();\n"
        "            case View.GIVE_CARD -> v.legalGiveCard();\n"
        "            case View.GIVE_TO -> v.legalGiveTo();\n"
        "            case View.TRADE_PARTNER -> v.legalTradePartner();\n"
        "            default -> v.legalDealSize();\n"
        "        };\n"
        "        return v.observation != null && legal.size() > 0 ? 0 : 1;\n"
        "    }\n}\n",
    ),
}


class FirstDecision(Seat):
    """A seat that notes when it was launched and when its first decision was answered."""

    def __init__(self, inner: Seat) -> None:
        self.inner = inner
        self.bot_id = inner.bot_id
        self.bot_version = inner.bot_version
        self.timed = inner.timed
        self.sandbox = inner.sandbox
        self.launched = 0.0
        self.first = 0.0

    def launch(self) -> None:
        self.launched = time.perf_counter()
        self.inner.launch()

    def start(self, info: StartInfo) -> None:
        self.inner.start(info)

    def decide(self, request: DecisionRequest) -> int:
        answer = self.inner.decide(request)
        if not self.first:
            self.first = time.perf_counter()
        return answer

    def finish(self, info: EndInfo) -> None:
        self.inner.finish(info)

    def close(self) -> None:
        self.inner.close()


class Timed(FirstDecision):
    """FirstDecision, and the seconds of every decision after the first."""

    def __init__(self, inner: Seat) -> None:
        super().__init__(inner)
        self.trips: list[float] = []

    def decide(self, request: DecisionRequest) -> int:
        started = time.perf_counter()
        answer = super().decide(request)
        if self.first != self.launched and self.first < started:
            self.trips.append(time.perf_counter() - started)
        return answer


def language_figures(
    root: Path, matches: int, languages: set[str] | None = None, reading: bool = False
) -> dict[str, dict[str, list[float]]]:
    """Table 5's figures per language with a built image (of ``languages`` and Python's,
    when given; ``reading``: the bots that read their JSON): "build" (seconds of a new
    version's image, its build step included), "cold" (launch to first decision), "trip"
    (each decision after the first)."""
    from saloon.worker.errors import BaseImageMissing
    from saloon.worker.sandbox.images import base_image_id
    from saloon.worker.sandbox.runtimes import runtime_for

    sandbox = DockerSandbox(warm=False)
    out: dict[str, dict[str, list[float]]] = {}
    try:
        bots = {}
        table = READING_BOTS if reading else LANGUAGE_BOTS
        for lang in sorted((languages or set()) - set(table)):
            print(f"{lang}: no bot of this table here (it has {', '.join(table)})")
        for lang, (entry, text) in table.items():
            if languages is not None and lang not in languages | {"python"}:
                continue
            try:
                base_image_id(sandbox.client, runtime_for(Language(lang)).tag())
            except BaseImageMissing:
                if languages is not None:  # asked for by name: say why it is not measured
                    print(f"{lang}: no runtime image here (bash deploy/dev.sh kit-images)")
                continue
            folder = root / f"lang-{lang}"
            folder.mkdir()
            (folder / entry).write_text(text)
            bots[lang] = str(folder)
            out[lang] = {"build": [], "cold": [], "trip": []}
            for n in range(3):  # each a new version: its whole build, timed
                version = root / f"lang-{lang}-v{n}"
                shutil.copytree(folder, version)
                suffix = "\n# v" if lang == "python" else "\n// v"
                (version / entry).write_text(text + f"{suffix}{n} {uuid.uuid4().hex}\n")
                started = time.perf_counter()
                sandbox.image(load_package(version))
                out[lang]["build"].append(time.perf_counter() - started)
            sandbox.image(load_package(folder))
        for seed in range(matches):
            for lang, bot in bots.items():
                seats = [Timed(sandbox.seat(bot, f"{lang}{i}")) for i in range(2)]
                record = play_match("seizure-v1", list(seats), seed=seed, limits=LIMITS)
                if record.faults:
                    raise SystemExit(f"{lang} bench bot faulted: {record.faults}")
                for seat in seats:
                    out[lang]["cold"].append(seat.first - seat.launched)
                    out[lang]["trip"].extend(seat.trips)
    finally:
        sandbox.close()
    return out


def language_table(console: Console, figures: dict[str, dict[str, list[float]]]) -> None:
    """Print table 5."""
    table = Table(
        title="Each language's runtime beside Python's, docker, seizure-v1 (medians; "
        "ratio to Python's)"
    )
    table.add_column("runtime")
    table.add_column("version build s", justify="right")
    table.add_column("cold start ms", justify="right")
    table.add_column("decision round trip us", justify="right")
    base = {k: statistics.median(v) for k, v in figures["python"].items()}
    for lang, values in figures.items():
        med = {k: statistics.median(v) for k, v in values.items()}
        table.add_row(
            lang,
            f"{med['build']:.1f}",
            f"{med['cold'] * 1000:.0f} ({med['cold'] / base['cold']:.2f}x)",
            f"{med['trip'] * 1e6:.0f} ({med['trip'] / base['trip']:.2f}x, n={len(values['trip'])})",
        )
    console.print(table)


def match_seconds(sandbox: Sandbox, bot: str, game: str, seats: int, seed: int) -> float:
    """Wall time of one match of ``seats`` copies of the bot in ``sandbox``."""
    started = time.perf_counter()
    record = play_match(
        game, [sandbox.seat(bot, f"bot{i}") for i in range(seats)], seed=seed, limits=LIMITS
    )
    if record.faults:
        raise SystemExit(f"bench bot faulted: {record.faults}")
    return time.perf_counter() - started


def cold_starts(bot: str, count: int) -> list[float]:
    """Seconds from launch to the first decision answered, each on a new container."""
    out = []
    sandbox = DockerSandbox(warm=False)
    try:
        sandbox.image(load_package(bot))  # built before the clock starts
        for seed in range(count):
            seat = FirstDecision(sandbox.seat(bot, "cold"))
            other = sandbox.seat(bot, "other")
            play_match("seizure-v1", [seat, other], seed=seed, limits=LIMITS)
            out.append(seat.first - seat.launched)
    finally:
        sandbox.close()
    return out


def duplicate_seasons(bots: list[str], rounds: int, seasons: int) -> dict[str, list[float]]:
    """Table 4's figures per kind ("today", "apart"): season wall seconds, median match
    seconds and containers started, one of each per season."""
    game, seats = "seas-of-strife-v1", 3
    out: dict[str, list[float]] = {}
    for n in range(seasons):
        spec = SeasonSpec(
            f"dup{n}", game, tuple(bots), seats, rounds=rounds, seed=1000 + n, duplicate=True
        )
        matches = expand(spec)
        boxes = {"today": DockerSandbox(), "apart": DockerSandbox()}
        try:
            for box in boxes.values():
                for bot in bots:
                    box.image(load_package(bot))  # built before the clock starts
            times: dict[str, list[float]] = {kind: [] for kind in boxes}
            for i, match in enumerate(matches):
                order = list(boxes) if i % 2 == 0 else list(reversed(boxes))
                for kind in order:
                    box = boxes[kind]
                    deal = match.seed if kind == "apart" else None
                    started = time.perf_counter()
                    record = play_match(
                        game,
                        [box.seat(b, b, deal=deal) for b in match.seats],
                        seed=match.seed,
                        limits=LIMITS,
                    )
                    times[kind].append(time.perf_counter() - started)
                    if record.faults:
                        raise SystemExit(f"bench bot faulted: {record.faults}")
            for kind, box in boxes.items():
                out.setdefault(f"{kind}:season", []).append(sum(times[kind]))
                out.setdefault(f"{kind}:match", []).append(statistics.median(times[kind]))
                out.setdefault(f"{kind}:containers", []).append(len(box.container_ids()))
        finally:
            for box in boxes.values():
                box.close()
    return out


def main() -> None:
    """Run the three measurements and print their tables."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--matches", type=int, default=10, help="matches per game and sandbox")
    parser.add_argument("--cold", type=int, default=5, help="cold starts to time")
    parser.add_argument("--no-gvisor", action="store_true", help="skip the runsc runtime")
    parser.add_argument("--dup-rounds", type=int, default=4, help="deals per duplicate season")
    parser.add_argument("--dup-seasons", type=int, default=3, help="duplicate seasons per kind")
    parser.add_argument("--only-duplicate", action="store_true", help="table 4 alone")
    parser.add_argument("--only-languages", action="store_true", help="table 5 alone")
    parser.add_argument(
        "--languages",
        help="table 5's languages, comma-separated, by name or alias (js, ts, go, cpp, java; "
        "default: every one built)",
    )
    parser.add_argument(
        "--reading", action="store_true", help="table 5's bots read their observation first"
    )
    args = parser.parse_args()
    console = Console()

    with tempfile.TemporaryDirectory() as tmp:
        chosen = None
        if args.languages:
            try:  # the names `saloon new --lang` takes too (js, ts, c++, ...)
                chosen = {language_named(n).value for n in args.languages.split(",") if n.strip()}
            except ManifestError as exc:
                parser.error(str(exc))
        figures = language_figures(Path(tmp), args.cold, chosen, args.reading)
        language_table(console, figures)
        if args.only_languages:
            return
        bot = str(Path(tmp) / "bot")
        Path(bot).mkdir()
        (Path(bot) / "bot.py").write_text(BOT)
        # A process bot run as root gets a uid of its own: it must be able to read its files.
        Path(tmp).chmod(0o755)
        # Table 4's three bot versions: the same bot, each file its own version.
        versions = []
        for v in range(3):
            path = Path(tmp) / f"v{v}.py"
            path.write_text(f"{BOT}# version {v}\n")
            versions.append(str(path))
        dup = duplicate_seasons(versions, args.dup_rounds, args.dup_seasons)
        duplicate_table(console, dup, args.dup_rounds, args.dup_seasons)
        if args.only_duplicate:
            return

        cold = cold_starts(bot, args.cold)
        table = Table(title=f"Cold container start to first decision ({args.cold} starts)")
        table.add_column("runtime")
        table.add_column("median ms", justify="right")
        table.add_column("min ms", justify="right")
        table.add_column("max ms", justify="right")
        table.add_row(
            "runc",
            f"{statistics.median(cold) * 1000:.0f}",
            f"{min(cold) * 1000:.0f}",
            f"{max(cold) * 1000:.0f}",
        )
        console.print(table)

        runtimes = ["runc"] if args.no_gvisor else ["runc", "runsc"]
        times: dict[tuple[str, str], list[float]] = {}
        process = ProcessSandbox()
        dockers = {rt: DockerSandbox(runtime=rt) for rt in runtimes}
        try:
            for game, seats in GAMES.items():
                for sandbox in dockers.values():
                    match_seconds(sandbox, bot, game, seats, seed=0)  # warm the pool
                # Interleaved, so a noisy neighbour hits every kind alike.
                for seed in range(1, args.matches + 1):
                    times.setdefault((game, "process"), []).append(
                        match_seconds(process, bot, game, seats, seed)
                    )
                    for rt, sandbox in dockers.items():
                        times.setdefault((game, rt), []).append(
                            match_seconds(sandbox, bot, game, seats, seed)
                        )
        finally:
            process.close()
            for sandbox in dockers.values():
                sandbox.close()

    table = Table(title=f"Matches per minute, {args.matches} matches per game and sandbox")
    table.add_column("game (seats)")
    table.add_column("process bots", justify="right")
    table.add_column("docker, warm pool", justify="right")
    table.add_column("docker / process", justify="right")
    for game, seats in GAMES.items():
        proc = 60 / statistics.median(times[(game, "process")])
        dock = 60 / statistics.median(times[(game, "runc")])
        table.add_row(f"{game} ({seats})", f"{proc:.0f}", f"{dock:.0f}", f"{dock / proc:.2f}x")
    console.print(table)

    if "runsc" in runtimes:
        table = Table(title="gVisor (runsc) against runc: median warm match, ms")
        table.add_column("game (seats)")
        table.add_column("runc", justify="right")
        table.add_column("runsc", justify="right")
        table.add_column("runsc / runc", justify="right")
        for game, seats in GAMES.items():
            runc = statistics.median(times[(game, "runc")])
            runsc = statistics.median(times[(game, "runsc")])
            table.add_row(
                f"{game} ({seats})",
                f"{runc * 1000:.0f}",
                f"{runsc * 1000:.0f}",
                f"{runsc / runc:.2f}x",
            )
        console.print(table)


def duplicate_table(
    console: Console, dup: dict[str, list[float]], rounds: int, seasons: int
) -> None:
    """Print table 4."""
    table = Table(
        title=f"Duplicate season, docker: deals kept apart against today's warm pool "
        f"(seas-of-strife-v1, 3 seats, 3 versions, {rounds} deals x 3 rotations; "
        f"medians of {seasons} seasons)"
    )
    table.add_column("what")
    table.add_column("today's pool", justify="right")
    table.add_column("deals kept apart", justify="right")
    table.add_column("apart / today", justify="right")
    for name, key, scale, unit in (
        ("season wall (cold starts included)", "season", 1.0, "s"),
        ("median match", "match", 1000.0, "ms"),
        ("containers started", "containers", 1.0, ""),
    ):
        today = statistics.median(dup[f"today:{key}"])
        apart = statistics.median(dup[f"apart:{key}"])
        fmt = ".2f" if unit == "s" else ".0f"
        table.add_row(
            name,
            f"{today * scale:{fmt}} {unit}".strip(),
            f"{apart * scale:{fmt}} {unit}".strip(),
            f"{apart / today:.2f}x",
        )
    extra = [
        (apart - today) / max(1.0, more - fewer)
        for apart, today, more, fewer in zip(
            dup["apart:season"],
            dup["today:season"],
            dup["apart:containers"],
            dup["today:containers"],
            strict=True,
        )
    ]
    table.add_row(
        "season wall added per extra container", "", "", f"{statistics.median(extra):.2f} s"
    )
    console.print(table)


if __name__ == "__main__":
    main()
