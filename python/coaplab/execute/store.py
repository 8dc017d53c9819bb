"""The results database: an embedded DuckDB file, written by the coordinator only.

Tables:
- ``configs``: one row per configuration (identity, name, resolved parameters as JSON).
- ``runs``: one row per (configuration, replication): seed, status (``ok`` / ``failed``),
  error text, the run-level metrics, wall time, engine and model versions, and the full
  per-run result as JSON (from which summaries are rebuilt).
- ``clients``: one row per (configuration, replication, client); TCP runs add the client's
  connection counters (``tcp_*`` columns). TCP time-sequence traces stay in ``runs.result``.
- ``traces``: per-client timer / RTO trace points, for runs with tracing on.
- ``cc_state``: the congestion controller's state per TCP connection and sending direction
  (BBR runs with tracing on; New Reno has none): mode, BtlBw, RTprop, pacing rate, cwnd after
  every ACK that changed them (docs/model.md "BBR"; columns :data:`CC_STATE_COLUMNS`).

The database records its schema version (table ``coaplab_meta``, key ``schema_version``):
coaplab's marker. A database without one is taken for a coaplab database written before
versions were recorded only if it has exactly coaplab's layout (:data:`FIRST_LAYOUT`, nothing
coaplab never wrote), and is then upgraded in one transaction when opened for writing (an
interrupted upgrade leaves it as it was); a newer version is refused with one line. Any other
file — a SQLite file, a DuckDB database of something else, random bytes, a named pipe — is
refused with one line, unchanged, and so is a coaplab database damaged by hand
(:func:`check_contents`). DuckDB's extension autoloading and autoinstalling are off on every
connection: opening a file never reaches the network.

Runs are committed the moment they finish (group commit: the runs that finished while the
previous commit was being written go into the next transaction together), so killing a sweep
at any point (SIGKILL included) loses at most the runs in progress; re-running the same command
skips the runs already stored.

The database is readable while a sweep writes it. DuckDB lets one process write a file, or
several read it, never both at once (an OS file lock), so the sweep's writer
(:class:`coaplab.execute.sweep.SweepWriter`) opens the file only for each group commit and closes it after, and
readers (``ResultsDB(path, read_only=True)``: ``coaplab report``, ``export``, ``status``,
``plot``, a notebook) retry for up to :data:`READ_WAIT_S` seconds when they meet a commit in
progress. A reader that keeps the file open blocks the writer: the finished runs then wait in
memory and are committed as soon as the reader closes it.
"""

from __future__ import annotations

import json
import os
import re
import time
import uuid
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Self

from ..errors import CoaplabError, ResourceError
from ..files import commit_partial, input_file, output_dir, partial_path, shown

#: Where `coaplab run` stores results when no `--db` is given.
DEFAULT_DB = "coaplab.duckdb"

#: The layout of the tables below. Bump it (and add the migration to ``_migrate``) whenever a
#: table changes in a way older coaplab versions cannot read.
SCHEMA_VERSION = 1

#: Every DuckDB connection coaplab opens: nothing is downloaded or loaded behind its back.
DUCKDB_CONFIG = {"autoload_known_extensions": False, "autoinstall_known_extensions": False}

#: The tables every coaplab results database has.
#: What joins a simulated configuration's id to the endpoints in its emulated counterpart's (the
#: runs ``coaplab emulate`` stores beside the simulated ones, which compare and report tell apart).
EMULATED_MARK = "-emu-"

TABLES = ("configs", "runs", "clients", "traces", "cc_state")

SCHEMA = """
CREATE TABLE IF NOT EXISTS coaplab_meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS configs (
    config_id TEXT PRIMARY KEY, name TEXT, model_version TEXT, config JSON
);
CREATE TABLE IF NOT EXISTS runs (
    config_id TEXT, replication INTEGER, name TEXT, seed UBIGINT, status TEXT, error TEXT,
    events UBIGINT, sim_time_s DOUBLE, measured_period_s DOUBLE, throughput_exchanges_per_s DOUBLE,
    settling_time_s DOUBLE, exchanges_completed BIGINT, exchanges_failed BIGINT,
    unnecessary_retransmissions BIGINT, packets_sent BIGINT, dropped_buffer BIGINT, lost_link BIGINT,
    wall_s DOUBLE, engine_version TEXT, model_version TEXT, stored_at TIMESTAMP DEFAULT current_timestamp,
    result JSON,
    PRIMARY KEY (config_id, replication)
);
CREATE TABLE IF NOT EXISTS clients (
    config_id TEXT, replication INTEGER, client INTEGER, fct_s DOUBLE, first_request_s DOUBLE,
    last_end_s DOUBLE, exchanges_completed INTEGER, exchanges_failed INTEGER, retransmissions INTEGER,
    unnecessary_retransmissions INTEGER, timeouts INTEGER, duplicate_responses INTEGER,
    PRIMARY KEY (config_id, replication, client)
);
ALTER TABLE clients ADD COLUMN IF NOT EXISTS tcp_connections INTEGER;
ALTER TABLE clients ADD COLUMN IF NOT EXISTS tcp_segments_sent BIGINT;
ALTER TABLE clients ADD COLUMN IF NOT EXISTS tcp_data_segments_sent BIGINT;
ALTER TABLE clients ADD COLUMN IF NOT EXISTS tcp_segments_retransmitted BIGINT;
ALTER TABLE clients ADD COLUMN IF NOT EXISTS tcp_syn_retransmissions BIGINT;
ALTER TABLE clients ADD COLUMN IF NOT EXISTS tcp_synack_retransmissions BIGINT;
ALTER TABLE clients ADD COLUMN IF NOT EXISTS tcp_csm_retransmissions BIGINT;
ALTER TABLE clients ADD COLUMN IF NOT EXISTS tcp_rto_expirations BIGINT;
ALTER TABLE clients ADD COLUMN IF NOT EXISTS tcp_fast_retransmits BIGINT;
ALTER TABLE clients ADD COLUMN IF NOT EXISTS tcp_duplicate_acks BIGINT;
ALTER TABLE runs ADD COLUMN IF NOT EXISTS emulated BOOLEAN;
ALTER TABLE runs ADD COLUMN IF NOT EXISTS endpoint TEXT;
ALTER TABLE runs ADD COLUMN IF NOT EXISTS kernel TEXT;
ALTER TABLE runs ADD COLUMN IF NOT EXISTS emulation JSON;
ALTER TABLE runs ADD COLUMN IF NOT EXISTS retransmission_ratio DOUBLE;
ALTER TABLE runs ADD COLUMN IF NOT EXISTS mean_rtt_s DOUBLE;
ALTER TABLE runs ADD COLUMN IF NOT EXISTS mean_rtt_weak_s DOUBLE;
ALTER TABLE runs ADD COLUMN IF NOT EXISTS mean_initial_rto_s DOUBLE;
ALTER TABLE runs ADD COLUMN IF NOT EXISTS settled BOOLEAN;
ALTER TABLE runs ADD COLUMN IF NOT EXISTS energy_j_per_exchange DOUBLE;
ALTER TABLE runs ADD COLUMN IF NOT EXISTS energy_mean_power_mw DOUBLE;
ALTER TABLE runs ADD COLUMN IF NOT EXISTS energy_battery_life_years DOUBLE;
CREATE TABLE IF NOT EXISTS traces (
    config_id TEXT, replication INTEGER, client INTEGER, time_s DOUBLE, event TEXT, exchange INTEGER,
    timer_s DOUBLE, rto_s DOUBLE, sample_s DOUBLE, sample_kind TEXT
);
CREATE TABLE IF NOT EXISTS outputs (
    file TEXT PRIMARY KEY, config_id TEXT, replication INTEGER, bytes BIGINT, sha256 TEXT
);
CREATE TABLE IF NOT EXISTS cc_state (
    config_id TEXT, replication INTEGER, client INTEGER, connection INTEGER, time_s DOUBLE, direction TEXT,
    mode TEXT, btlbw_bytes_per_s BIGINT, rtprop_s DOUBLE, pacing_rate_bytes_per_s BIGINT, cwnd_bytes BIGINT
);
"""

RUN_COLUMNS = ("config_id", "replication", "name", "seed", "status", "error", "events", "sim_time_s",
               "measured_period_s", "throughput_exchanges_per_s", "settling_time_s", "exchanges_completed",
               "exchanges_failed", "unnecessary_retransmissions", "packets_sent", "dropped_buffer", "lost_link",
               "wall_s", "engine_version", "model_version", "result", *("retransmission_ratio", "mean_rtt_s",
               "mean_rtt_weak_s", "mean_initial_rto_s", "settled"),
               *("energy_j_per_exchange", "energy_mean_power_mw", "energy_battery_life_years"))
#: The run columns added after the first release (NULL in rows stored before them, and for
#: metrics a run does not have: TCP runs' exchange metrics, non-burst runs' ``settled``).
LATER_RUN_COLUMNS = RUN_COLUMNS[-8:-3]
#: Networks that record time per radio state (docs/energy.md): the run's ``energy`` figures.
ENERGY_RUN_COLUMNS = RUN_COLUMNS[-3:]
#: TCP runs: per-client counters of the client's connections (NULL for UDP runs).
TCP_CLIENT_COLUMNS = ("connections", "segments_sent", "data_segments_sent", "segments_retransmitted",
                      "syn_retransmissions", "synack_retransmissions", "csm_retransmissions", "rto_expirations",
                      "fast_retransmits", "duplicate_acks")
TRACE_COLUMNS = ("config_id", "replication", "client", "time_s", "event", "exchange", "timer_s", "rto_s",
                 "sample_s", "sample_kind")
#: The congestion controller's state rows of a TCP run, from the controller's snapshot (any
#: controller that has one: ``coaplab.describe.scenario.CC_STATE_CONTROLLERS``; docs/model.md "BBR",
#: "CUBIC"), after config_id and replication: the client and its connection (numbered across the
#: run, as in the time-sequence trace), time (s), the sending direction (``up`` client → server,
#: ``down`` server → client), the mode (BBR: ``startup``, ``drain``, ``probe_bw``, ``probe_rtt``;
#: CUBIC: ``slow_start``, ``avoidance``), the bandwidth estimate (bytes/s; BBR's BtlBw, 0 for a
#: controller without one), the minimum-RTT estimate (s; BBR's RTprop, CUBIC's delay_min; empty
#: before the first RTT sample), pacing rate (bytes/s, 0 without pacing) and cwnd (bytes). The
#: column names are BBR's, kept so stored databases and exports stay as they were.
CC_STATE_COLUMNS = ("client", "connection", "time_s", "direction", "mode", "btlbw_bytes_per_s", "rtprop_s",
                    "pacing_rate_bytes_per_s", "cwnd_bytes")
CLIENT_COLUMNS = ("client", "fct_s", "first_request_s", "last_end_s", "exchanges_completed", "exchanges_failed",
                  "retransmissions", "unnecessary_retransmissions", "timeouts", "duplicate_responses")


def sequence_points(trace: dict[str, Any], direction: str = "down") -> list[dict[str, Any]]:
    """One connection's time-sequence points in one direction (an entry of a result's
    ``seq_traces``: points ``[time_s, direction, event, seq, length]``) as the rows
    :func:`coaplab.present.traces.time_sequence` draws: ``time_s``, ``event``, ``seq``, ``length``."""
    return [{"time_s": t, "event": ev, "seq": seq, "length": n}
            for t, d, ev, seq, n in trace["points"] if d == direction]


#: Rows of a traced run's bottleneck queue occupancy: the link direction (``up`` client →
#: server, ``down``), the link element's name, the time of a change, s, and the bytes waiting in
#: the buffer from then on (the packet being serialized is not in the buffer).
QUEUE_COLUMNS = ("direction", "link", "time_s", "queue_bytes")
#: Rows of a traced run's per-direction throughput: direction, link, the start of a bin, s, the
#: bin's width, s, and the IP bytes the link delivered (serialized and not lost) in it, as kbit/s.
THROUGHPUT_COLUMNS = ("direction", "link", "time_s", "bin_s", "kbps")


def queue_rows(result: dict[str, Any]) -> list[tuple]:
    """A run result's queue occupancy change-points (:data:`QUEUE_COLUMNS`), link by link, in
    time order; none without tracing or on a mesh (docs/model.md "Time series")."""
    return [(s["direction"], s["link"], t, b) for s in result.get("timeseries") or [] for t, b in s["queue"]]


def throughput_rows(result: dict[str, Any]) -> list[tuple]:
    """A run result's delivered throughput per bin (:data:`THROUGHPUT_COLUMNS`), link by link,
    every bin from time 0 to the last one with a delivery."""
    return [(s["direction"], s["link"], round(i * s["bin_s"], 9), s["bin_s"], n * 8 / s["bin_s"] / 1000)
            for s in result.get("timeseries") or [] for i, n in enumerate(s["delivered_bytes"])]


def queue_points(result: dict[str, Any]) -> list[dict[str, Any]]:
    """The rows :func:`coaplab.present.traces.queue_occupancy` draws for one run: each traced
    direction from 0 B at time 0 (drawn even if it never queued), then its change-points."""
    return ([{"direction": s["direction"], "time_s": 0.0, "queue_bytes": 0} for s in result.get("timeseries") or []]
            + [{"direction": d, "time_s": t, "queue_bytes": b} for d, _, t, b in queue_rows(result)])


def series_note(result: dict[str, Any]) -> str:
    """`` (recorded until 3600.0 s: the cap)`` when a series of the run reached its size cap
    (docs/model.md "Time series"), else empty."""
    ends = [s["truncated_at_s"] for s in result.get("timeseries") or [] if s.get("truncated_at_s") is not None]
    return f" (recorded until {min(ends):.1f} s: the cap)" if ends else ""


def throughput_points(result: dict[str, Any]) -> list[dict[str, Any]]:
    """The rows :func:`coaplab.present.traces.throughput_series` draws for one run."""
    return [{"direction": d, "time_s": t, "bin_s": w, "kbps": k} for d, _, t, w, k in throughput_rows(result)]


def cc_state_rows(result: dict[str, Any]) -> list[tuple]:
    """A run result's congestion-controller state rows (:data:`CC_STATE_COLUMNS`), connection by
    connection, each direction's rows in time order; none for New Reno (no state beyond its
    window) or without tracing. The
    engine writes RTprop 0 before the first RTT sample: that becomes ``None`` (no estimate)."""
    return [(t["client"], t["connection"], at, direction, mode, btlbw, rtprop if rtprop > 0 else None, pacing, cwnd)
            for t in result.get("seq_traces") or []
            for at, direction, mode, btlbw, rtprop, pacing, cwnd in t.get("cc") or []]


def _cc_frame(rows: list[tuple]):
    """``cc_state`` rows (config_id, replication, then :data:`CC_STATE_COLUMNS`) as a frame whose
    missing RTprop is a NULL, not a NaN."""
    import pandas as pd  # lazy: pandas (start-up)

    frame = pd.DataFrame(rows, columns=["config_id", "replication", *CC_STATE_COLUMNS])
    return frame.astype({"replication": "int32", "client": "int32", "connection": "int32", "time_s": "float64",
                         "btlbw_bytes_per_s": "int64", "rtprop_s": "Float64", "pacing_rate_bytes_per_s": "int64",
                         "cwnd_bytes": "int64"})


#: Seconds a reader retries, while another process (a sweep's commit) holds the database, before one line.
READ_WAIT_S = 10.0
#: Pause between two attempts to open a database another process holds.
RETRY_PAUSE_S = 0.02


def read_requests(path: Path) -> list[Path]:
    """The live read requests on `path`: ``<db>.read-request-<pid>-<nonce>`` files that readers
    waiting for the writer's lock create next to the database, and remove once they are in."""
    try:
        names = os.listdir(path.parent if str(path.parent) else ".")
    except OSError:
        return []
    prefix = path.name + ".read-request-"
    now = time.time()
    live = []
    for n in names:
        if n.startswith(prefix):
            req = path.with_name(n)
            try:
                if now - req.stat().st_mtime <= READ_WAIT_S + 1.0:
                    live.append(req)
                else:
                    req.unlink()  # left by a reader killed while it waited
            except OSError:
                pass
    return live


class DatabaseBusy(CoaplabError):
    """Another process held the database for longer than we were willing to wait."""


def _lock_holder(error: BaseException) -> str | None:
    """``"PID n"`` when `error` is DuckDB's "another process holds the file lock" error."""
    text = str(error)
    if "Could not set lock" not in text and "Conflicting lock" not in text:
        return None
    m = re.search(r"PID (\d+)", text)
    return f"PID {m.group(1)}" if m else "another process"


def is_interrupt(error: BaseException) -> bool:
    """Whether `error` is DuckDB's form of a Ctrl-C that arrived while it ran a query (it
    raises this instead of KeyboardInterrupt)."""
    import duckdb  # lazy: DuckDB (start-up)

    return isinstance(error, duckdb.InterruptException) or (
        isinstance(error, RuntimeError) and str(error).startswith("Query interrupted"))


def connect(path: str | Path, read_only: bool = False):
    """A DuckDB connection with extension autoloading and autoinstalling off."""
    import duckdb  # lazy: DuckDB (start-up)

    return duckdb.connect(str(path), read_only=read_only, config=dict(DUCKDB_CONFIG))


def _not_ours(path: Path, what: str) -> CoaplabError:
    return CoaplabError(f"--db: {str(path)!r} is not a coaplab results database ({what}); "
                        "give a new file name or a database written by coaplab")


def _sniff(path: Path) -> None:
    """Refuses a file that is not a DuckDB database before DuckDB sees it (DuckDB would try to
    load an extension for a SQLite file; a named pipe would block the command forever)."""
    input_file(path, "--db", "database file")  # never opened unless a regular file
    try:
        with open(path, "rb") as f:
            head = f.read(16)
    except OSError as e:
        raise CoaplabError(f"--db: cannot read {shown(path)}: {e.strerror or e}") from None
    if not head:
        return  # an empty file: a new database (ResultsDB replaces it; DuckDB refuses it as it is)
    if head.startswith(b"SQLite format 3"):
        raise _not_ours(path, "a SQLite file")
    if head[8:12] != b"DUCK":
        raise _not_ours(path, "not a DuckDB file")


_LAYOUT: dict[str, set[str]] = {}


def coaplab_layout() -> dict[str, set[str]]:
    """Table → columns of the current schema (from :data:`SCHEMA` itself, in memory)."""
    if not _LAYOUT:
        con = connect(":memory:")
        try:
            con.execute(SCHEMA)
            for table, column in con.execute("SELECT table_name, column_name FROM information_schema.columns "
                                             "WHERE table_schema = 'main'").fetchall():
                _LAYOUT.setdefault(table, set()).add(column)
        finally:
            con.close()
    return _LAYOUT


#: The tables a coaplab database has had since the first release, before it carried a
#: version stamp (``coaplab_meta``), with the columns they were created with.
FIRST_LAYOUT = {
    "configs": {"config_id", "name", "model_version", "config"},
    "runs": set(RUN_COLUMNS[:20]) | {"stored_at", "result"},
    "clients": {"config_id", "replication", *CLIENT_COLUMNS},
    "traces": set(TRACE_COLUMNS),
}


def _unstamped_is_ours(con) -> bool:
    """Whether a database without a version stamp is an old coaplab one: every table of the
    first layout with all its columns, and nothing coaplab never wrote (a table or a column)."""
    found: dict[str, set[str]] = {}
    for table, column in con.execute("SELECT table_name, column_name FROM information_schema.columns "
                                     "WHERE table_schema = 'main'").fetchall():
        found.setdefault(table, set()).add(column)
    layout = coaplab_layout()
    return (all(cols <= found.get(t, set()) for t, cols in FIRST_LAYOUT.items())
            and all(t in layout and cols <= layout[t] for t, cols in found.items()))


#: The keys every stored run result has (those :meth:`ResultsDB.store` reads).
RESULT_KEYS = ("clients", "packets", "seed", "events", "sim_time_s", "measured_period_s",
               "throughput_exchanges_per_s", "settling_time_s")


def check_contents(con, path: Path) -> None:
    """Refuses, in one line naming the database, what is wrong and what to do, a coaplab
    database damaged outside coaplab: a table of the first layout dropped, a configuration or
    a stored run whose JSON is NULL, not JSON, not an object or without the keys every one has
    (a configuration's ``name``, :data:`RESULT_KEYS`), a run without its configuration. Commands then never meet the damage half-way through their work. (coaplab
    writes every configuration and result as a JSON object, so its first character is ``{``;
    the check costs about 10 ms per MB of stored results.)"""
    tables = {t for (t,) in con.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main'").fetchall()}
    advice = "restore the file from a backup, or give another --db"
    for table in FIRST_LAYOUT:
        if table not in tables:
            raise CoaplabError(f"--db: {shown(path)} is a damaged coaplab database: its table {table!r} is missing; "
                               f"{advice}")
    bad = con.execute(
        "SELECT config_id, CASE WHEN config IS NULL THEN 'NULL' WHEN NOT starts_with(config, '{') THEN 'not a JSON object' "
        "WHEN NOT json_valid(config) THEN 'not JSON' ELSE 'no name' END FROM configs "
        "WHERE config IS NULL OR NOT starts_with(config, '{') OR NOT json_valid(config) "
        "OR NOT list_contains(json_keys(config), 'name') LIMIT 1").fetchone()
    if bad:
        raise CoaplabError(f"--db: {shown(path)} is a damaged coaplab database: configuration {bad[0]} is unreadable "
                           f"({bad[1]}); {advice}")
    keys = "[" + ", ".join(sql_string(k) for k in RESULT_KEYS) + "]"
    bad = con.execute(
        "SELECT r.config_id, r.replication, CASE WHEN c.config_id IS NULL THEN 'no configuration' "
        "WHEN r.result IS NULL THEN 'an unreadable result (NULL)' "
        "WHEN NOT starts_with(r.result, '{') THEN 'an unreadable result (not a JSON object)' "
        "WHEN NOT json_valid(r.result) THEN 'an unreadable result (not JSON)' "
        "ELSE 'an unreadable result (not a run result: keys missing)' END "
        "FROM runs r LEFT JOIN configs c USING (config_id) WHERE c.config_id IS NULL OR (r.status = 'ok' AND "
        "(r.result IS NULL OR NOT starts_with(r.result, '{') OR NOT json_valid(r.result) "
        f"OR NOT list_has_all(json_keys(r.result), {keys}))) LIMIT 1").fetchone()
    if bad:
        cid, rep, what = bad
        raise CoaplabError(
            f"--db: {shown(path)} is a damaged coaplab database: run {rep} of configuration {cid} has {what}; "
            f"{advice}, or delete that run (DELETE FROM runs WHERE config_id = {sql_string(str(cid))} AND "
            f"replication = {rep}) and re-run its sweep to measure it again")


class ResultsDB:
    """A results database file. Use as a context manager or call :meth:`close`."""

    def __init__(self, path: str | Path, read_only: bool = False, wait_s: float | None = None,
                 migrate: bool = True):
        """Opens the file; while another process holds it (a sweep committing, or readers when
        opening for writing), retries for up to `wait_s` seconds (default: :data:`READ_WAIT_S`),
        then raises :class:`DatabaseBusy`. `migrate=False` only checks the schema version (the
        sweep's writer migrates once, at its start)."""
        import duckdb  # lazy: DuckDB (start-up)

        self.path = Path(path)
        if input_file(self.path, "--db", "database file", missing_ok=not read_only) is not None:
            _sniff(self.path)
            if self.path.is_file() and self.path.stat().st_size == 0:  # a zero-byte file is a new database
                if read_only:
                    raise CoaplabError(f"--db: {str(self.path)!r} is empty: no results are stored in it yet")
                self.path.unlink()  # DuckDB makes a new database only where no file is
        wait_s = READ_WAIT_S if wait_s is None else wait_s
        deadline = time.monotonic() + wait_s
        request = None  # a reader that meets the writer's lock asks it to stay out until it is in
        try:
            while True:
                try:
                    self.con = connect(self.path, read_only=read_only)
                    break
                except duckdb.Error as e:
                    if is_interrupt(e):  # a Ctrl-C, not a database that cannot be opened
                        raise
                    holder = _lock_holder(e)
                    if holder is None:
                        raise CoaplabError(f"--db: cannot open {str(self.path)!r}: {str(e).splitlines()[0]}") from None
                    if time.monotonic() >= deadline:
                        what = ("a running sweep lets go between commits; a process keeping it open, such as a "
                                "notebook connection, does not: close that" if read_only else
                                "close the connections reading it, such as a notebook's")
                        raise DatabaseBusy(f"--db: {str(self.path)!r} is held by {holder} and was not released "
                                           f"within {wait_s:g} s; {what}, then try again") from None
                if read_only and request is None:
                    request = self.path.with_name(f"{self.path.name}.read-request-{os.getpid()}-{uuid.uuid4().hex[:8]}")
                    try:
                        request.touch()
                    except OSError:  # a read-only directory: retry without asking
                        request = None
                time.sleep(RETRY_PAUSE_S)
        finally:
            if request is not None:
                request.unlink(missing_ok=True)
        try:
            self._check_schema(read_only, migrate)
        except BaseException:
            self.con.close()
            raise

    def _check_schema(self, read_only: bool, migrate: bool = True) -> None:
        """Refuses a foreign or newer database; migrates (stamps) an older coaplab one."""
        if not migrate and not read_only:
            import duckdb  # lazy: DuckDB (start-up)

            try:  # the sweep's writer re-opening a database it checked at its start
                if self.schema_version() == SCHEMA_VERSION:
                    return
            except duckdb.Error as e:
                if is_interrupt(e):  # the user's Ctrl-C arrived during this query: not lost
                    raise
        tables = {t for (t,) in self.con.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main'").fetchall()}
        version = None
        row = None
        if "coaplab_meta" in tables:
            row = self.con.execute("SELECT value FROM coaplab_meta WHERE key = 'schema_version'").fetchone()
            if row is not None and not str(row[0]).isdigit():
                raise _not_ours(self.path, "its coaplab_meta table has no valid schema version")
        if row is not None:
            version = int(row[0])
        elif tables:
            # No stamp: an old coaplab database only if it has exactly coaplab's layout (an
            # upgrade interrupted by an earlier coaplab left an empty coaplab_meta beside it).
            if not _unstamped_is_ours(self.con):
                what = ("its coaplab_meta table has no schema version" if "coaplab_meta" in tables else
                        f"no coaplab marker; it holds the tables {', '.join(sorted(tables)[:5])}")
                raise _not_ours(self.path, what)
            version = 1  # written before versions were recorded: version 1's layout
        if version is not None and version > SCHEMA_VERSION:
            raise CoaplabError(
                f"--db: {str(self.path)!r} is a coaplab results database of schema version {version}, newer than "
                f"this coaplab's ({SCHEMA_VERSION}); upgrade coaplab, or give another --db")
        if read_only and version is None:
            raise _not_ours(self.path, "an empty database")
        if version is not None:
            check_contents(self.con, self.path)  # before a migration reads the stored results
        if not read_only and (migrate or version != SCHEMA_VERSION):
            self._migrate(version)

    def _migrate(self, version: int | None) -> None:
        """Brings the database to SCHEMA_VERSION (``None``: a new database) in one transaction:
        the new tables and columns, the rows they are filled with and the version stamp are
        committed together, so an upgrade interrupted at any point (Ctrl-C, SIGKILL, a full
        disk) leaves the database as it was, and the next command upgrades it again."""
        # Version 1 is SCHEMA itself (idempotent: it also adds the columns and tables later
        # releases of version 1 added).
        with self._transaction():
            had_cc_state = self._has_table("cc_state")
            self.con.execute(SCHEMA)
            if version is not None and not had_cc_state:
                self._fill_cc_state()
            self.con.execute("INSERT OR REPLACE INTO coaplab_meta VALUES ('schema_version', ?)",
                             (str(SCHEMA_VERSION),))

    def _has_table(self, table: str) -> bool:
        return self.con.execute("SELECT count(*) FROM information_schema.tables WHERE table_schema = 'main' "
                                "AND table_name = ?", (table,)).fetchone()[0] > 0

    def _fill_cc_state(self) -> None:
        """A database written before the ``cc_state`` table existed: its rows, from the stored
        results (which always kept them, inside the time-sequence traces)."""
        rows: list[tuple] = []
        for cid, rep, text in self.con.execute(
                "SELECT config_id, replication, result FROM runs WHERE status = 'ok' AND result LIKE '%\"seq_traces\"%'"
        ).fetchall():
            rows.extend((cid, rep, *row) for row in cc_state_rows(json.loads(text)))
        if rows:
            self.con.register("cc_rows", _cc_frame(rows))
            self.con.execute("INSERT INTO cc_state SELECT * FROM cc_rows")
            self.con.unregister("cc_rows")

    def schema_version(self) -> int:
        row = self.con.execute("SELECT value FROM coaplab_meta WHERE key = 'schema_version'").fetchone()
        return int(row[0]) if row else 1

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        try:
            self.con.close()
        except Exception:  # noqa: BLE001, S110 - after an I/O error the database may be invalidated; nothing to keep
            pass

    def add_configs(self, configs: Iterable[tuple[str, dict[str, Any]]], model_version: str) -> None:
        import pandas as pd  # lazy: pandas (start-up)

        new_configs = pd.DataFrame(
            [(cid, c["name"], model_version, json.dumps(c, sort_keys=True)) for cid, c in configs],
            columns=["config_id", "name", "model_version", "config"],
        ).drop_duplicates("config_id")
        self.con.register("new_configs", new_configs)
        self.con.execute("INSERT OR IGNORE INTO configs SELECT * FROM new_configs")
        self.con.unregister("new_configs")

    def superseded(self, configs: Iterable[tuple[str, dict[str, Any]]], model_version: str) -> dict[str, int]:
        """config_id → how many runs are stored successfully for a configuration with the same
        parameters and model version but another config_id: a ``python:`` / ``c:`` algorithm's
        file that has changed since (``config_id`` hashes its content), runs never reused."""
        wanted = {cid: json.loads(json.dumps(c)) for cid, c in configs}
        if not wanted:
            return {}
        names = sorted({c["name"] for c in wanted.values()})
        rows = self.con.execute(
            "SELECT c.config_id, c.config, count(*) FROM configs c JOIN runs r USING (config_id) "
            "WHERE r.status = 'ok' AND c.model_version = ? AND c.name IN (SELECT unnest(?)) "
            "GROUP BY c.config_id, c.config", [model_version, names]).fetchall()
        out: dict[str, int] = {}
        for cid, c in wanted.items():
            n = sum(count for other, text, count in rows if other != cid and json.loads(text) == c)
            if n:
                out[cid] = n
        return out

    def finished(self) -> set[tuple[str, int]]:
        """(config, replication) pairs stored successfully. Also remembers which pairs have a
        stored failure, so that storing their retry replaces exactly those rows."""
        rows = self.con.execute("SELECT config_id, replication, status FROM runs").fetchall()
        self._failed = {(c, r) for c, r, status in rows if status != "ok"}
        return {(c, r) for c, r, status in rows if status == "ok"}

    def store(self, batch: list[tuple[str, dict[str, Any], int, dict[str, Any] | None, str | None, float]],
              engine_version: str, model_version: str, outputs: Sequence[tuple] = ()) -> None:
        """Stores finished runs — `(config_id, config, replication, result or None, error or
        None, wall_s)` — with their clients and traces, in one transaction (group commit: the
        runs that finished while the previous commit was being written)."""
        import pandas as pd  # lazy: pandas (start-up)

        run_rows: list[tuple] = []
        client_rows: list[tuple] = []
        trace_rows: list[tuple] = []
        cc_rows: list[tuple] = []
        for cid, config, rep, result, error, wall_s in batch:
            if result is None:
                run_rows.append((cid, rep, config["name"], config["seed"], "failed", error) + (None,) * 11
                                + (wall_s, engine_version, model_version, None)
                                + (None,) * (len(LATER_RUN_COLUMNS) + len(ENERGY_RUN_COLUMNS)))
                continue
            clients = result["clients"]
            traces = result.get("traces")
            p = result["packets"]
            stored = {k: v for k, v in result.items() if k != "traces"}
            run_rows.append((
                cid, rep, config["name"], result["seed"], "ok", None, result["events"], result["sim_time_s"],
                result["measured_period_s"], result["throughput_exchanges_per_s"], result["settling_time_s"],
                sum(c["exchanges_completed"] for c in clients), sum(c["exchanges_failed"] for c in clients),
                sum(c["unnecessary_retransmissions"] for c in clients), p["sent"], p["dropped_buffer"], p["lost_link"],
                wall_s, engine_version, model_version, json.dumps(stored),
                *(result.get(k) for k in LATER_RUN_COLUMNS),
                *((result.get("energy") or {}).get(k.removeprefix("energy_")) for k in ENERGY_RUN_COLUMNS),
            ))
            client_rows.extend((cid, rep, *(c.get(k) for k in CLIENT_COLUMNS),
                                *((c.get("tcp") or {}).get(k) for k in TCP_CLIENT_COLUMNS)) for c in clients)
            if traces:
                trace_rows.extend((cid, rep, t["client"], *pt) for t in traces for pt in t["points"])
            cc_rows.extend((cid, rep, *row) for row in cc_state_rows(result))
        frames = {
            "runs": pd.DataFrame(run_rows, columns=RUN_COLUMNS),
            "clients": pd.DataFrame(client_rows, columns=["config_id", "replication", *CLIENT_COLUMNS,
                                                          *(f"tcp_{k}" for k in TCP_CLIENT_COLUMNS)]),
            "traces": pd.DataFrame(trace_rows, columns=TRACE_COLUMNS),
            "cc_state": _cc_frame(cc_rows),
        }
        import duckdb  # lazy: DuckDB (start-up)

        try:
            self._outputs = list(outputs)
            self._write(batch, frames)
        except (OSError, duckdb.IOException, duckdb.OutOfMemoryException, duckdb.FatalException,
                duckdb.TransactionException) as e:
            # A full disk (or a vanished one): the transaction was rolled back, every run
            # committed before stays; the sweep stops and a re-run resumes. (DuckDB reports a
            # full disk met while committing as a TransactionException.)
            reason = getattr(e, "strerror", None) or str(e).splitlines()[0]
            raise ResourceError(f"--db: cannot store results in {str(self.path)!r}: {reason}; the runs stored "
                                "before are kept: free space and re-run the same command to resume") from None

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        """One transaction: committed when the block ends, rolled back when it raises (anything,
        Ctrl-C included), so that the database is never left half-written."""
        self.con.execute("BEGIN TRANSACTION")
        try:
            yield
            self.con.execute("COMMIT")
        except BaseException:
            try:
                self.con.execute("ROLLBACK")
            except Exception:  # noqa: BLE001, S110 - the connection may be unusable after an I/O error
                pass
            raise

    def _write(self, batch, frames) -> None:
        """One transaction: removes the stored failures being retried, inserts the rows, and
        records the output files written (:meth:`outputs`)."""
        with self._transaction():
            if getattr(self, "_outputs", None):
                self.con.executemany("INSERT OR REPLACE INTO outputs VALUES (?, ?, ?, ?, ?)", self._outputs)
            for cid, _, rep, _, _, _ in batch:
                self._delete(cid, rep)
            for table, frame in frames.items():
                if len(frame):
                    self.con.register("batch_rows", frame)
                    self.con.execute(f"INSERT INTO {table} ({', '.join(frame.columns)}) SELECT * FROM batch_rows")
                    self.con.unregister("batch_rows")

    def delete_run(self, cid: str, rep: int) -> None:
        """Removes a stored run (an emulated run measured again replaces the earlier one)."""
        for table in ("runs", "clients", "traces", "cc_state"):
            self.con.execute(f"DELETE FROM {table} WHERE config_id = ? AND replication = ?", (cid, rep))

    def mark_emulated(self, cid: str, rep: int, endpoint: str, kernel: str, details: dict[str, Any]) -> None:
        """Marks a stored run as emulated (docs/emulation.md): which endpoints ran (client/server
        stack), the kernel, and the emulator's details (lateness, validity, real-time setup)."""
        self.con.execute("UPDATE runs SET emulated = true, endpoint = ?, kernel = ?, emulation = ? "
                         "WHERE config_id = ? AND replication = ?", (endpoint, kernel, json.dumps(details), cid, rep))

    def _delete(self, cid: str, rep: int) -> None:
        """Removes a stored failure before its retry is stored (successes are never re-run)."""
        if (cid, rep) not in getattr(self, "_failed", set()):
            return
        self._failed.discard((cid, rep))
        for table in ("runs", "clients", "traces", "cc_state"):
            self.con.execute(f"DELETE FROM {table} WHERE config_id = ? AND replication = ?", (cid, rep))

    def results(self, pairs: Iterable[tuple[str, int]]) -> dict[tuple[str, int], tuple[dict[str, Any], float]]:
        """(result, wall_s) of the given successfully stored (config, replication) pairs."""
        wanted = set(pairs)
        if not wanted:
            return {}
        # Only the wanted configurations' rows leave the database: a large one holds many
        # results of megabytes each (coaplab advise reads a few configurations at a time).
        ids = sorted({c for c, _ in wanted})
        rows = self.con.execute("SELECT config_id, replication, result, wall_s FROM runs WHERE status = 'ok' "
                                "AND list_contains(?, config_id)", [ids]).fetchall()
        return {(c, r): (json.loads(res), w) for c, r, res, w in rows if (c, r) in wanted}

    def outputs(self) -> dict[str, tuple[int, str]]:
        """The output files (pcaps, trace CSVs) written for stored runs: file name → (bytes,
        SHA-256). A file on disk that differs from its record is cut short or foreign: the
        sweep writes it again."""
        if not self._has_table("outputs"):
            return {}
        return {f: (int(n), h) for f, n, h in self.con.execute("SELECT file, bytes, sha256 FROM outputs").fetchall()}

    def failures(self) -> list[tuple[str, str, int, str]]:
        return self.con.execute(
            "SELECT config_id, name, replication, error FROM runs WHERE status = 'failed' ORDER BY name, replication").fetchall()

    def frame(self, table: str):
        """A table as a pandas DataFrame (``configs``, ``runs``, ``clients``, ``traces``, ``cc_state``)."""
        if table not in TABLES:
            raise CoaplabError(f"table {table!r}: allowed: {', '.join(TABLES)}")
        import duckdb  # lazy: DuckDB (start-up)

        if table == "cc_state" and not self._has_table(table):
            # Read-only, written before the table existed: the rows are in the stored results.
            return self._cc_state_from_results()
        try:
            return self.con.execute(f"SELECT * FROM {table}").df()
        except duckdb.CatalogException:
            raise CoaplabError(f"--db: {str(self.path)!r} holds no coaplab results (no table {table!r})") from None

    def _cc_state_from_results(self):
        import duckdb  # lazy: DuckDB (start-up)

        try:
            stored = self.con.execute(
                "SELECT config_id, replication, result FROM runs WHERE status = 'ok' AND result LIKE '%\"seq_traces\"%' "
                "ORDER BY config_id, replication").fetchall()
        except duckdb.CatalogException:
            raise CoaplabError(f"--db: {str(self.path)!r} holds no coaplab results (no table 'runs')") from None
        rows: list[tuple] = []
        for cid, rep, text in stored:
            rows.extend((cid, rep, *row) for row in cc_state_rows(json.loads(text)))
        return _cc_frame(rows)

    def arrow(self, table: str):
        """A table as a pyarrow Table."""
        frame = self.frame(table)  # validates the name
        if table == "cc_state" and not self._has_table(table):
            import pyarrow as pa  # lazy: pyarrow (start-up)

            return pa.Table.from_pandas(frame, preserve_index=False)
        rel = self.con.sql(f"SELECT * FROM {table}")
        return rel.to_arrow_table() if hasattr(rel, "to_arrow_table") else rel.arrow()

    def export(self, out_dir: str | Path, fmt: str) -> list[Path]:
        """Writes every table as ``<table>.parquet`` or ``<table>.csv`` into ``out_dir``."""
        if fmt not in ("parquet", "csv"):
            raise CoaplabError(f"--format: {fmt!r} is not allowed; expected parquet or csv")
        out = output_dir(out_dir, "--out")
        written = []
        for table in TABLES:
            path = out / f"{table}.{fmt}"
            opts = "(FORMAT PARQUET)" if fmt == "parquet" else "(FORMAT CSV, HEADER)"
            source = table
            if not self._has_table(table):  # cc_state of a database written before it existed
                self.con.register("cc_rows", self.frame(table))
                source = "cc_rows"
            copy_to(self.con, f"SELECT * FROM {source}", path, opts)
            if source != table:
                self.con.unregister("cc_rows")
            written.append(path)
        return written

    def packets_sent(self, pairs: Iterable[tuple[str, int]]) -> dict[tuple[str, int], int]:
        """Packets sent by the given successfully stored (config, replication) pairs."""
        wanted = set(pairs)
        rows = self.con.execute("SELECT config_id, replication, packets_sent FROM runs WHERE status = 'ok'").fetchall()
        return {(c, r): int(n or 0) for c, r, n in rows if (c, r) in wanted}


def status(path: str | Path) -> list[dict[str, Any]]:
    """Per scenario name: configurations, runs stored (ok) / failed / total (the replications
    of the stored configurations), and the last commit time; read while a sweep may be running."""
    with ResultsDB(path, read_only=True) as db:
        configs = db.con.execute("SELECT config_id, name, config FROM configs").fetchall()
        counts = db.con.execute(
            "SELECT config_id, count(*) FILTER (WHERE status = 'ok'), count(*) FILTER (WHERE status <> 'ok'), "
            "max(stored_at) FROM runs GROUP BY config_id").fetchall()
    per_config = {cid: (ok, failed, last) for cid, ok, failed, last in counts}
    out: dict[str, dict[str, Any]] = {}
    for cid, name, text in configs:
        row = out.setdefault(name, {"scenario": name, "configurations": 0, "stored": 0, "failed": 0, "total": 0,
                                    "last_commit": None})
        ok, failed, last = per_config.get(cid, (0, 0, None))
        row["configurations"] += 1
        row["stored"] += ok
        row["failed"] += failed
        row["total"] += int(json.loads(text).get("replications", 0))
        if last is not None and (row["last_commit"] is None or last > row["last_commit"]):
            row["last_commit"] = last
    return list(out.values())


def sql_string(text: str) -> str:
    """`text` as a SQL string literal (quotes doubled): DuckDB's COPY takes no parameter for its
    file name, so the path the user gave is quoted here, never pasted."""
    return "'" + text.replace("'", "''") + "'"


def copy_to(con, query: str, path: Path, opts: str) -> None:
    """``COPY (query) TO path``, written whole or not at all (a partial name, then a rename)."""
    partial = partial_path(path)
    try:
        con.execute(f"COPY ({query}) TO {sql_string(partial.as_posix())} {opts}")
        commit_partial(partial, path)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
