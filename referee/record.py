"""The match record: everything needed to show, verify and rate one match (JSON).

The layout is documented in docs/match-record.md. Two runs of the same match (same game,
options, seats, seed) give byte-identical JSON except under the one key ``timing``, which
holds measured wall times and which tools may drop (:func:`without_timing`).
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field
from enum import StrEnum
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import orjson

from saloon.games import Options
from saloon.referee.errors import RecordError
from saloon.referee.faults import Fault, FaultKind
from saloon.referee.limits import MatchLimits, SandboxInfo
from saloon.sdk.output import split_marked

FORMAT = "saloon.match/1"
#: The one key whose content differs between two runs of the same match.
TIMING_KEY = "timing"


class Outcome(StrEnum):
    """How a match ended; the one enum of it, from the record to the store and the ratings."""

    #: Played to the end: rated (played-out seats rank last, as the record says).
    COMPLETED = "completed"
    #: Stopped by the referee or the infrastructure (never by a bot): not rated, not counted.
    ABORTED = "aborted"


class AbortReason(StrEnum):
    """Why the referee stopped a match before the game ended."""

    #: The log reached the game's ``max_length`` (an engine that does not terminate).
    MAX_LENGTH = "max_length"
    #: The whole match ran past its wall-clock cap (saloon.referee.limits.wall_cap_ms).
    WALL_CLOCK = "wall_clock"


@functools.cache  # a metadata lookup reads files; a season worker asks several times a match
def saloon_version() -> str:
    """The installed saloon version (recorded with every match)."""
    try:
        return version("saloon-arena")
    except PackageNotFoundError:  # running from a source tree that is not installed
        return "0+unknown"


@dataclass(frozen=True)
class LogEntry:
    """One entry of the action log: a seat's action, or a chance outcome (seat None)."""

    seat: int | None
    kind: str
    action: int = 0
    outcome: tuple[int, ...] = ()
    #: True when the referee played the seat's only legal action without asking it.
    auto: bool = False
    #: True when house:random chose for a seat that was played out after faults.
    fallback: bool = False
    #: The public events this entry caused (a trick won, a stack taken, a round scored),
    #: as the engine reports them: ``{"event": name, ...}`` objects.
    events: tuple[dict[str, Any], ...] = ()

    @property
    def is_chance(self) -> bool:
        """True for a chance outcome."""
        return self.seat is None

    def to_json(self, copy: bool = True) -> dict[str, Any]:
        """The entry's JSON form (``copy=False``: sharing the entry's own outcome tuple and
        event dicts, for an encoder that only reads them)."""
        out: dict[str, Any]
        if self.seat is None:
            out = {"chance": self.kind, "outcome": list(self.outcome) if copy else self.outcome}
        else:
            out = {"seat": self.seat, "kind": self.kind, "action": self.action}
            if self.auto:
                out["auto"] = True
            if self.fallback:
                out["fallback"] = True
        if self.events:
            out["events"] = [dict(e) for e in self.events] if copy else self.events
        return out

    @classmethod
    def from_json(cls, raw: Any) -> LogEntry:
        """Parse one entry; RecordError when it is malformed."""
        if not isinstance(raw, dict):
            raise RecordError(f"log entry {raw!r} is not an object")
        events = raw.get("events", [])
        if not isinstance(events, list) or not all(
            isinstance(e, dict) and isinstance(e.get("event"), str) for e in events
        ):
            raise RecordError(f"log entry {raw!r}: 'events' must be a list of event objects")
        if "chance" in raw:
            outcome = raw.get("outcome")
            if not isinstance(outcome, list) or not all(_is_int(x) for x in outcome):
                raise RecordError(f"chance entry {raw!r} needs an integer list 'outcome'")
            return cls(None, str(raw["chance"]), outcome=tuple(outcome), events=tuple(events))
        seat, action = raw.get("seat"), raw.get("action")
        if not (isinstance(seat, int) and isinstance(action, int)) or not (
            _is_int(seat) and _is_int(action) and isinstance(raw.get("kind"), str)
        ):
            raise RecordError(f"log entry {raw!r} needs integer 'seat', 'action' and a 'kind'")
        return cls(
            seat,
            raw["kind"],
            action=action,
            auto=bool(raw.get("auto", False)),
            fallback=bool(raw.get("fallback", False)),
            events=tuple(events),
        )


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


@dataclass(frozen=True)
class SeatInfo:
    """Who sat in a seat: the bot id (``house:greedy``, a path, a bot@version) and the
    version that played ("" when unknown)."""

    seat: int
    bot: str
    version: str = ""
    #: The sandbox the bot ran in and its limits (None: in the referee, or a grpc target).
    sandbox: SandboxInfo | None = None

    def to_json(self) -> dict[str, Any]:
        """The seat's JSON form."""
        out: dict[str, Any] = {"seat": self.seat, "bot": self.bot}
        if self.version:
            out["version"] = self.version
        if self.sandbox is not None:
            out["sandbox"] = self.sandbox.to_json()
        return out


@dataclass(frozen=True)
class Note:
    """A line a seat's bot reported about one of its decisions (``Bot.take_notes``): the
    house search says here when its time cap, not its playout budget, ended a search."""

    seat: int
    #: The log entry (decision index) the note is about.
    decision: int
    text: str

    def to_json(self) -> dict[str, Any]:
        """The note's JSON form."""
        return {"seat": self.seat, "decision": self.decision, "text": self.text}


@dataclass(frozen=True)
class StderrBlock:
    """What a seat's bot wrote to stderr at one moment of the match, as lines."""

    seat: int
    #: ``load`` (before the match started: import, construction), ``start``
    #: (``on_match_start``), ``decision`` (``act`` of log entry ``decision``) or ``end``.
    when: str
    decision: int | None
    lines: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        """The block's JSON form."""
        return {
            "seat": self.seat,
            "when": self.when,
            "decision": self.decision,
            "lines": list(self.lines),
        }


def stderr_blocks(seat: int, text: str) -> list[StderrBlock]:
    """A seat's captured stderr (marked by the runtime, saloon.sdk.output) as blocks by
    moment of the match."""
    blocks = []
    for moment, lines in split_marked(text):
        when, _, number = moment.partition(" ")
        decision = int(number) if when == "decision" and number.isdigit() else None
        blocks.append(StderrBlock(seat, when, decision, tuple(lines)))
    return blocks


@dataclass
class MatchRecord:
    """One played match."""

    match_id: str
    game: str
    options: Options
    seed: int
    seats: list[SeatInfo]
    limits: MatchLimits
    log: list[LogEntry] = field(default_factory=list)
    faults: list[Fault] = field(default_factory=list)
    #: Seats played out by house:random after a crash or too many strikes (ranked last).
    played_out: list[int] = field(default_factory=list)
    scores: list[float] = field(default_factory=list)
    ranks: list[int] = field(default_factory=list)
    #: COMPLETED, or ABORTED (no scores or ranks then) with ``abort_reason`` saying why.
    outcome: Outcome = Outcome.COMPLETED
    abort_reason: AbortReason | None = None
    saloon_version: str = field(default_factory=saloon_version)
    #: What bots in the referee's process noted about their decisions (omitted when none).
    notes: list[Note] = field(default_factory=list)
    #: What bots wrote to stderr, by decision (``saloon play`` fills it in; the arena keeps
    #: a seat's stderr apart, for its owner only; omitted when empty).
    stderr: list[StderrBlock] = field(default_factory=list)
    #: Measured wall times; the only part that differs between runs of the same match.
    timing: dict[str, Any] = field(default_factory=dict)

    def to_json(self, *, timing: bool = True) -> dict[str, Any]:
        """The record's JSON form (``timing=False`` drops the measured wall times)."""
        return self._json([e.to_json() for e in self.log], timing)

    def json_bytes(self, *, timing: bool = True) -> bytes:
        """``orjson.dumps(self.to_json())`` (compact UTF-8 JSON, the same bytes) at about
        half the cost: the log's entries share their outcome tuples and event dicts instead
        of copying them first (a worker stores every record it plays this way)."""
        log = [e.to_json(copy=False) for e in self.log]
        return orjson.dumps(self._json(log, timing))

    def _json(self, log: list[dict[str, Any]], timing: bool) -> dict[str, Any]:
        out: dict[str, Any] = {
            "format": FORMAT,
            "saloon_version": self.saloon_version,
            "match_id": self.match_id,
            "game": self.game,
            "options": dict(self.options),
            "seed": self.seed,
            "seats": [s.to_json() for s in self.seats],
            "limits": self.limits.to_json(),
            "log": log,
            "faults": [
                {"seat": f.seat, "kind": f.kind.value, "decision": f.decision, "detail": f.detail}
                for f in self.faults
            ],
            "played_out": list(self.played_out),
            "scores": list(self.scores),
            "ranks": list(self.ranks),
            "outcome": self.outcome.value,
        }
        if self.abort_reason is not None:
            out["abort_reason"] = self.abort_reason.value
        if self.notes:
            out["notes"] = [n.to_json() for n in self.notes]
        if self.stderr:
            out["stderr"] = [b.to_json() for b in self.stderr]
        if timing:
            out[TIMING_KEY] = self.timing
        return out

    def dumps(self, *, timing: bool = True) -> str:
        """The record as JSON text: one key per line, one log entry per line."""
        parts = []
        for key, value in self.to_json(timing=timing).items():
            if key == "log" and value:
                entries = ",\n  ".join(json.dumps(e, separators=(",", ":")) for e in value)
                text = "[\n  " + entries + "\n ]"
            else:
                text = json.dumps(value)
            parts.append(f" {json.dumps(key)}: {text}")
        return "{\n" + ",\n".join(parts) + "\n}\n"

    @classmethod
    def from_json(cls, raw: Any) -> MatchRecord:
        """Parse a record; RecordError names the first thing wrong with it."""
        if not isinstance(raw, dict):
            raise RecordError("a match record is a JSON object")
        if raw.get("format") != FORMAT:
            raise RecordError(
                f"not a match record of format {FORMAT} (format={raw.get('format')!r})"
            )
        try:
            seats = [
                SeatInfo(
                    int(s["seat"]),
                    str(s["bot"]),
                    str(s.get("version", "")),
                    SandboxInfo.from_json(s["sandbox"]) if "sandbox" in s else None,
                )
                for s in raw["seats"]
            ]
            faults = [
                Fault(int(f["seat"]), FaultKind(f["kind"]), int(f["decision"]), str(f["detail"]))
                for f in raw.get("faults", [])
            ]
            seed = raw["seed"]
            if not _is_int(seed):
                raise RecordError(f"seed {seed!r} is not an integer")
            return cls(
                match_id=str(raw["match_id"]),
                game=str(raw["game"]),
                options=dict(raw.get("options", {})),
                seed=seed,
                seats=seats,
                limits=MatchLimits.from_json(raw.get("limits", {})),
                log=[LogEntry.from_json(e) for e in raw["log"]],
                faults=faults,
                played_out=[int(s) for s in raw.get("played_out", [])],
                scores=[float(x) for x in raw.get("scores", [])],
                ranks=[int(x) for x in raw.get("ranks", [])],
                # Records written before outcomes existed were all played to the end.
                outcome=Outcome(raw.get("outcome", Outcome.COMPLETED.value)),
                abort_reason=(
                    AbortReason(raw["abort_reason"]) if raw.get("abort_reason") else None
                ),
                saloon_version=str(raw.get("saloon_version", "")),
                notes=[
                    Note(int(n["seat"]), int(n["decision"]), str(n["text"]))
                    for n in raw.get("notes", [])
                ],
                stderr=[
                    StderrBlock(
                        int(b["seat"]),
                        str(b["when"]),
                        None if b.get("decision") is None else int(b["decision"]),
                        tuple(str(line) for line in b["lines"]),
                    )
                    for b in raw.get("stderr", [])
                ],
                timing=dict(raw.get(TIMING_KEY, {})),
            )
        except RecordError:
            raise
        except (KeyError, TypeError, ValueError) as exc:
            raise RecordError(f"malformed match record: {type(exc).__name__}: {exc}") from None

    @classmethod
    def load(cls, path: str | Path) -> MatchRecord:
        """Read a record from a JSON file; RecordError for anything unreadable."""
        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError as exc:
            raise RecordError(f"cannot read {path}: {exc.strerror or exc}") from None
        except UnicodeDecodeError:
            raise RecordError(f"{path} is not UTF-8 text") from None
        try:
            raw = json.loads(text)
        except json.JSONDecodeError as exc:
            raise RecordError(f"{path} is not JSON: {exc}") from None
        return cls.from_json(raw)


def without_timing(raw: dict[str, Any]) -> dict[str, Any]:
    """A record's JSON with the measured wall times dropped (for comparisons)."""
    return {k: v for k, v in raw.items() if k != TIMING_KEY}
