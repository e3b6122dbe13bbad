"""Recording results: a finished match written once per match id (a unique key and ON
CONFLICT DO NOTHING, so it holds across processes and machines), with its seats, faults,
compressed record and stderr, and its scheduled match marked DONE.
"""

from __future__ import annotations

import binascii
import logging
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any, NamedTuple

import orjson
import sqlalchemy as sa

from saloon.referee.errors import RecordError
from saloon.referee.record import MatchRecord, Outcome
from saloon.worker.errors import (
    InvalidRecord,
    StoreUnavailable,
)
from saloon.worker.store import schema as t
from saloon.worker.store.codec import RECORD_ENCODING, compress_record
from saloon.worker.store.config import DEFAULT_STORE_CONFIG, StoreConfig
from saloon.worker.store.connections import (
    _CHUNK,
    StoreBase,
    _ConnectionLost,
    _Flight,
    _now,
)
from saloon.worker.store.rows import (
    MatchStatus,
)

log = logging.getLogger(__name__)


# Built once: statement objects memoise their cache keys, so the hot path skips that work.
_INSERT_RESULT = t.results.insert()


_INSERT_SEATS = t.result_seats.insert()


_INSERT_FAULTS = t.faults.insert()


_INSERT_RECORD = t.match_records.insert()


_INSERT_STDERR = t.seat_stderr.insert()


#: PostgreSQL: record matches in ONE statement (Store.send_results), in autocommit (its
#: own durable transaction): data-modifying CTEs, each row set keyed by its match id,
#: every write hanging off the result rows the first CTE inserts, so a match recorded
#: already (ON CONFLICT: no row) writes nothing at all. Faults keep their order (their ids
#: are the order faults() reads back): WITH ORDINALITY, inserted in that order. Sent
#: through libpq itself (Store._pg_send), so every parameter is text: the row sets as JSON
#: arrays ($1 results, $2 seats, $3 faults, $4 stderr, $5 records, their compressed blobs
#: in base64), $6 the encoding, $7 DONE, $8 the time of the DONE marks (each result row
#: carries its own finish time).
_RECORD_MANY_PG = b"""
WITH r AS (
    INSERT INTO results
        (match_id, game, options, seed, outcome, abort_reason, saloon_version, finished_at,
         match_ms)
    SELECT x.match_id, x.game, x.options, x.seed, x.outcome, x.abort_reason,
           x.saloon_version, x.finished_at, x.match_ms
    FROM json_to_recordset(CAST($1 AS JSON)) AS x(
        match_id TEXT, game TEXT, options JSON, seed TEXT, outcome TEXT, abort_reason TEXT,
        saloon_version TEXT, finished_at TIMESTAMPTZ, match_ms DOUBLE PRECISION)
    ON CONFLICT (match_id) DO NOTHING
    RETURNING match_id
), seats AS (
    INSERT INTO result_seats (match_id, seat, bot, version, score, rank, played_out, faults)
    SELECT x.match_id, x.seat, x.bot, x.version, x.score, x.rank, x.played_out, x.faults
    FROM json_to_recordset(CAST($2 AS JSON)) AS x(
        match_id TEXT, seat INTEGER, bot TEXT, version TEXT, score DOUBLE PRECISION,
        rank INTEGER, played_out BOOLEAN, faults INTEGER)
    JOIN r ON r.match_id = x.match_id
), faults AS (
    INSERT INTO faults (match_id, seat, kind, decision, detail)
    SELECT x.f ->> 'match_id', CAST(x.f ->> 'seat' AS INTEGER), x.f ->> 'kind',
           CAST(x.f ->> 'decision' AS INTEGER), x.f ->> 'detail'
    FROM json_array_elements(CAST($3 AS JSON)) WITH ORDINALITY AS x(f, n)
    JOIN r ON r.match_id = x.f ->> 'match_id'
    ORDER BY x.n
), record AS (
    INSERT INTO match_records (match_id, encoding, raw_bytes, data)
    SELECT x.match_id, CAST($6 AS TEXT), x.raw_bytes, decode(x.data, 'base64')
    FROM json_to_recordset(CAST($5 AS JSON)) AS x(match_id TEXT, raw_bytes INTEGER, data TEXT)
    JOIN r ON r.match_id = x.match_id
), stderr AS (
    INSERT INTO seat_stderr (match_id, seat, "text", dropped_bytes)
    SELECT x.match_id, x.seat, x."text", x.dropped_bytes
    FROM json_to_recordset(CAST($4 AS JSON)) AS x(
        match_id TEXT, seat INTEGER, "text" TEXT, dropped_bytes INTEGER)
    JOIN r ON r.match_id = x.match_id
), done AS (
    UPDATE scheduled_matches SET status = CAST($7 AS TEXT), updated_at = CAST($8 AS TIMESTAMPTZ)
    WHERE match_id IN (SELECT match_id FROM r)
)
SELECT match_id FROM r
"""


#: The name _RECORD_MANY_PG is prepared under, on each connection that sends it.
_RECORD_MANY_NAME = "saloon_record_many_2"


class PreparedResult(NamedTuple):
    """One match's result as the store will write it (Store.prepare_result): its rows,
    checked, and its record encoded and compressed. A worker prepares each match as it
    ends, while the record is still in the CPU's caches, and keeps only this."""

    result: dict[str, Any]
    seats: list[dict[str, Any]]
    faults: list[dict[str, Any]]
    record: dict[str, Any]
    stderr: list[dict[str, Any]]
    at: datetime


class PendingResults:
    """Results on their way into the store (Store.send_results); :meth:`wait` for them."""

    def __init__(
        self,
        match_ids: list[str],
        written: set[str] | None,
        collect: Callable[[], set[str]] | None = None,
    ) -> None:
        self.match_ids = match_ids
        self._written = written
        self._collect = collect

    @property
    def settled(self) -> bool:
        """True once the store's answer is in (wait() returns at once)."""
        return self._written is not None

    def wait(self) -> list[bool]:
        """For each match, True when this recording wrote it (False: recorded already).
        StoreUnavailable when the database could not be reached: the caller may retry."""
        if self._written is None:
            if self._collect is None:
                raise StoreUnavailable("record results: the answer was lost")
            collect, self._collect = self._collect, None
            self._written = collect()
        return [m in self._written for m in self.match_ids]


class Recording(StoreBase):
    """Results written once per match id."""

    def __init__(self, engine: sa.Engine, config: StoreConfig = DEFAULT_STORE_CONFIG) -> None:
        super().__init__(engine, config)
        # Built once: recording is the hot path, and building a statement per call costs
        # more than running it.
        self._mark_done = (
            t.scheduled_matches.update()
            .where(t.scheduled_matches.c.match_id == sa.bindparam("b_match_id"))
            .values(status=sa.bindparam("b_status"), updated_at=sa.bindparam("b_at"))
        )
        self._recorded = sa.select(t.results.c.match_id).where(
            t.results.c.match_id.in_(sa.bindparam("b_ids", expanding=True))
        )

    def prepare_result(
        self,
        match_id: str,
        record: dict[str, Any] | MatchRecord,
        stderr: Mapping[int, str],
        *,
        parsed: MatchRecord | None = None,
    ) -> PreparedResult:
        """One finished match's result as the store will write it, checked and its record
        compressed now (InvalidRecord when the record is malformed); its finish time is now.
        Then :meth:`send_results` or :meth:`record_results` writes it: the one way a
        result is recorded.

        ``record``: the record's JSON object, or the MatchRecord itself (a worker that just
        played the match: encoded once, straight to its stored form, nothing parsed back).
        ``parsed``: the MatchRecord that a JSON ``record`` is the JSON of, when the caller
        holds it: its header is then not parsed again. ``stderr``: each seat's, capped."""
        return self._record_rows(match_id, record, stderr, parsed)

    def record_results(self, items: Sequence[PreparedResult]) -> list[bool]:
        """Write prepared matches, each once by its own id, all in one transaction, and
        mark their scheduled matches DONE: for each, True when this call wrote it, False
        when it was recorded already (a retried or duplicated job). :meth:`send_results`
        waited for. StoreUnavailable when the database is unreachable or drops the
        connection: nothing was written, so the caller may simply retry."""
        return self.send_results(items).wait()

    def send_results(self, items: Sequence[PreparedResult]) -> PendingResults:
        """Record prepared matches (see :meth:`record_results`) without waiting for the
        database (a batch job plays its next matches meanwhile); the handle's ``wait()``
        gives, for each match, whether this call wrote it.

        PostgreSQL: the statement is sent and the call returns; the server executes and
        commits it (durably) while the caller goes on, and ``wait()`` reads its answer.
        Until then the result is not known to be stored: a caller reports nothing as
        recorded before ``wait()`` returned. SQLite: recorded before the call returns.
        StoreUnavailable from ``wait()``.
        """
        built = [(p.result["match_id"], p) for p in items]
        if not built:
            return PendingResults([], set())
        if not self._postgres:
            written = self._again_if_dropped(lambda: self._record_many_once(built))
            return PendingResults([m for m, _ in built], written)
        what = f"record {len(built)} results"
        params = self._record_params(built)
        try:
            flight = self._pg_send(_RECORD_MANY_NAME, _RECORD_MANY_PG, params, what)
        except _ConnectionLost as exc:  # a dropped pooled connection: wait() retries
            log.info("store: connection dropped (%s); the record is retried", exc)
            flight = None
        return PendingResults(
            [m for m, _ in built], None, lambda: self._pg_record(built, flight, params)
        )

    def _record_many_once(self, built: list[tuple[str, PreparedResult]]) -> set[str]:
        if not self._postgres:
            with self.write(f"record {len(built)} results") as conn:
                return self._insert_many(conn, built)
        return self._pg_record(built)

    def _pg_record(
        self,
        built: list[tuple[str, PreparedResult]],
        flight: _Flight | None = None,
        params: list[bytes] | None = None,
    ) -> set[str]:
        """PostgreSQL: collect ``flight`` (or send ``built`` and collect it); once more on
        a fresh connection if the one used turned out dead (a result is written once, so
        sending it again is safe)."""
        what = f"record {len(built)} results"
        params = params or self._record_params(built)
        rows = self._pg_run(_RECORD_MANY_NAME, _RECORD_MANY_PG, params, what, flight)
        return {row[0] for row in rows}

    def _record_params(self, built: list[tuple[str, PreparedResult]]) -> list[bytes]:
        """_RECORD_MANY_PG's parameters for ``built`` (a match id twice: the first)."""
        results, seats, faults, stderr, records = [], [], [], [], []
        seen: set[str] = set()
        for match_id, rows in built:
            if match_id in seen:  # twice in one call: the first is written
                continue
            seen.add(match_id)
            results.append(rows.result)
            seats.extend(rows.seats)
            faults.extend(rows.faults)
            stderr.extend(rows.stderr)
            blob = rows.record
            data = binascii.b2a_base64(blob["data"], newline=False).decode("ascii")
            records.append({"match_id": match_id, "raw_bytes": blob["raw_bytes"], "data": data})
        return [
            orjson.dumps(results),
            orjson.dumps(seats),
            orjson.dumps(faults),
            orjson.dumps(stderr),
            orjson.dumps(records),
            RECORD_ENCODING.encode(),
            MatchStatus.DONE.value.encode(),
            max(rows.at for _, rows in built).isoformat().encode(),
        ]

    def _record_rows(
        self,
        match_id: str,
        record: dict[str, Any] | MatchRecord,
        stderr: Mapping[int, str],
        parsed: MatchRecord | None,
    ) -> PreparedResult:
        """The rows of one match's result, checked (InvalidRecord when it is malformed)."""
        if isinstance(record, MatchRecord):
            # A worker's own record, just played: encoded once, straight to its stored form.
            if record.match_id != match_id:
                raise InvalidRecord(
                    f"record of match {record.match_id!r} given for match {match_id!r}"
                )
            parsed, outcome = record, record.outcome
            abort_reason = record.abort_reason.value if record.abort_reason else ""
            try:
                raw = record.json_bytes()
            except TypeError as exc:
                raise InvalidRecord(f"match {match_id}: not plain JSON: {exc}") from None
        else:
            if not isinstance(record, dict):
                raise InvalidRecord(f"match {match_id}: a match record is a JSON object")
            try:
                # Checked before the record is parsed, so the message is the store's own.
                outcome = Outcome(record.get("outcome", Outcome.COMPLETED.value))
            except ValueError:
                raise InvalidRecord(
                    f"match {match_id}: outcome {record.get('outcome')!r} is not completed|aborted"
                ) from None
            if (
                parsed is None
                or parsed.match_id != match_id
                or not isinstance(record.get("log"), list)
            ):
                parsed = _parse_record(match_id, record)
            abort_reason = str(record.get("abort_reason") or "")
            try:
                raw = orjson.dumps(record)
            except TypeError as exc:
                raise InvalidRecord(
                    f"match {match_id}: the record is not plain JSON: {exc}"
                ) from None
        blob = compress_record(raw, self._config.compress_level)
        faults_per_seat: dict[int, int] = {}
        for fault in parsed.faults:
            faults_per_seat[fault.seat] = faults_per_seat.get(fault.seat, 0) + 1
        played_out = set(parsed.played_out)
        seats = [
            {
                "match_id": match_id,
                "seat": info.seat,
                "bot": info.bot,
                "version": info.version,
                "score": parsed.scores[info.seat] if info.seat < len(parsed.scores) else None,
                "rank": parsed.ranks[info.seat] if info.seat < len(parsed.ranks) else None,
                "played_out": info.seat in played_out,
                "faults": faults_per_seat.get(info.seat, 0),
            }
            for info in parsed.seats
        ]
        fault_rows = [
            {
                "match_id": match_id,
                "seat": f.seat,
                "kind": f.kind.value,
                "decision": f.decision,
                "detail": f.detail,
            }
            for f in parsed.faults
        ]
        stderr_rows = [
            self._stderr_row(match_id, seat, text) for seat, text in sorted(stderr.items()) if text
        ]
        now = _now()
        result_row = {
            "match_id": match_id,
            "game": parsed.game,
            "options": dict(parsed.options),
            "seed": str(parsed.seed),
            "outcome": outcome.value,
            "abort_reason": abort_reason,
            "saloon_version": parsed.saloon_version,
            "finished_at": now,
            "match_ms": _match_ms(parsed),
        }
        blob_row = {
            "match_id": match_id,
            "encoding": RECORD_ENCODING,
            "raw_bytes": len(raw),
            "data": blob,
        }
        return PreparedResult(result_row, seats, fault_rows, blob_row, stderr_rows, now)

    def _insert_many(
        self, conn: sa.Connection, built: list[tuple[str, PreparedResult]]
    ) -> set[str]:
        """SQLite: the rows of matches not recorded yet, in the caller's write transaction
        (BEGIN IMMEDIATE: no other writer between the read and the inserts), one
        executemany per table; the ids written (a match recorded already is dropped)."""
        ids = list(dict.fromkeys(m for m, _ in built))
        known: set[str] = set()
        for start in range(0, len(ids), _CHUNK):
            known.update(
                conn.execute(self._recorded, {"b_ids": ids[start : start + _CHUNK]}).scalars()
            )
        fresh: list[PreparedResult] = []
        for match_id, rows in built:
            if match_id in known:
                log.info("store: %s already recorded; this copy is dropped", match_id)
                continue
            known.add(match_id)
            fresh.append(rows)
        if not fresh:
            return set()
        conn.execute(_INSERT_RESULT, [r.result for r in fresh])
        for statement, many in (
            (_INSERT_SEATS, [x for r in fresh for x in r.seats]),
            (_INSERT_FAULTS, [x for r in fresh for x in r.faults]),
            (_INSERT_RECORD, [r.record for r in fresh]),
            (_INSERT_STDERR, [x for r in fresh for x in r.stderr]),
        ):
            if many:
                conn.execute(statement, many)
        done = MatchStatus.DONE.value
        conn.execute(
            self._mark_done,
            [{"b_match_id": r.result["match_id"], "b_status": done, "b_at": r.at} for r in fresh],
        )
        return {r.result["match_id"] for r in fresh}

    def _stderr_row(self, match_id: str, seat: int, text: str) -> dict[str, Any]:
        data = text.encode("utf-8", errors="replace")
        cap = self._config.stderr_cap_bytes
        kept = data[:cap].decode("utf-8", errors="ignore")  # never split a character
        return {
            "match_id": match_id,
            "seat": int(seat),
            "text": kept,
            "dropped_bytes": len(data) - len(kept.encode("utf-8")),
        }


def _match_ms(record: MatchRecord) -> float | None:
    """The record's own measure of its match's time (``timing.match_ms``), if any."""
    value = record.timing.get("match_ms") if isinstance(record.timing, dict) else None
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _parse_record(match_id: str, record: dict[str, Any]) -> MatchRecord:
    """The record's header, seats, faults, scores and ranks, checked; the log is only
    checked to be a list (parsing ~240 entries would cost more than storing them)."""
    if not isinstance(record.get("log"), list):
        raise InvalidRecord(f"match {match_id}: the record has no 'log' list")
    try:
        parsed = MatchRecord.from_json({**record, "log": []})
    except RecordError as exc:
        raise InvalidRecord(f"match {match_id}: {exc}") from None
    if parsed.match_id != match_id:
        raise InvalidRecord(f"record of match {parsed.match_id!r} given for match {match_id!r}")
    return parsed
