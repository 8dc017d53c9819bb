"""BBR's state rows (docs/model.md "BBR", "State trace") end to end: the Python API
(`Result.cc_state_frame`), the results database (`cc_state` table), `coaplab export`, the
`--trace` CSVs, and the time-sequence graph's state panel. New Reno has none of them.

Expected values come from docs/model.md and docs/design.md: MTU 296 B, so MSS = 296 − 40 =
256 B; initial window 4 segments = 1024 B; Startup's gain 2/ln 2 = bbr_high_gain = 739/256;
ProbeBW's pacing gains 5/4, 3/4 and 1; ProbeRTT's cwnd 4 segments; cwnd at least 4 segments.
"""

import csv
import itertools
import math

import pandas as pd
import pytest

import coaplab
from coaplab.execute.store import CC_STATE_COLUMNS, ResultsDB
from coaplab.present import traces

MSS = 296 - 40  # docs/model.md: the MSS is link.mtu − 40; docs/design.md: MTU 296 B
IW = 4 * MSS  # docs/model.md: initial_window 4 segments

#: Mode changes the state machine of docs/model.md allows. Startup → ProbeBW: Drain is entered
#: and, once in flight is already ≤ 1 BDP + the budget, left on the same ACK (Linux
#: bbr_check_drain), and a row is taken only after each ACK.
ALLOWED = {("startup", "drain"), ("startup", "probe_bw"), ("drain", "probe_bw"), ("startup", "probe_rtt"),
           ("drain", "probe_rtt"), ("probe_bw", "probe_rtt"), ("probe_rtt", "probe_bw"), ("probe_rtt", "startup")}


def firmware(cc, buffers=(1410000,), replications=1):
    return {"name": f"fw-{cc}", "seed": 1, "replications": replications, "trace": True,
            "workload": {"kind": "firmware", "clients": 1},
            "coap": {"transport": "tcp", "cc": cc},
            "sweep": {"link.buffer_bytes": list(buffers)}}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """One database with the traced firmware transfer over BBR (infinite and 2500 B buffers)
    and over New Reno."""
    db = tmp_path_factory.mktemp("bbr") / "b.duckdb"
    bbr = coaplab.run(firmware("bbr", (2500, 1410000)), db=db, jobs=1)
    reno = coaplab.run(firmware("newreno"), db=db, jobs=1)
    return db, bbr, reno


def cid_of(res, buffer):
    return next(s["config_id"] for s in res.summaries if s["config"]["link"]["buffer_bytes"] == buffer)


def test_the_api_frame_and_what_docs_model_says(runs):
    _, bbr, reno = runs
    frame = bbr.cc_state_frame()
    assert list(frame.columns) == ["config_id", "link.buffer_bytes", "replication", *CC_STATE_COLUMNS]
    assert reno.cc_state_frame().empty and list(reno.cc_state_frame().columns)[-1] == "cwnd_bytes"
    one = frame[(frame.config_id == cid_of(bbr, 1410000)) & (frame.replication == 0)]
    assert set(one.direction) == {"up", "down"}  # both ends send: requests up, the image down
    down = one[one.direction == "down"]  # the server's state: it sends the 102400-byte image
    first = down.iloc[0]
    # The connection starts in Startup with the initial window; no bandwidth sample yet, so
    # the pacing rate is 2.885 × cwnd / SRTT, SRTT being the handshake's sample (RFC 6298
    # §2.2: SRTT ← R), which also initialises RTprop. Linux's integer arithmetic floors
    # cwnd / SRTT to whole bytes per second before the gain (739/256) and the product after:
    # at most 739/256 + 1 B/s below the real-valued rate.
    assert first["mode"] == "startup" and first.cwnd_bytes == IW == 1024 and first.btlbw_bytes_per_s == 0
    exact = 739 / 256 * IW / first.rtprop_s
    assert 0 <= exact - first.pacing_rate_bytes_per_s < 739 / 256 + 1
    # A handshake over the 400 ms downlink + 200 ms uplink + two 10–20 ms path delays, plus
    # serialisation: between 0.62 s and 0.7 s.
    assert 0.62 < first.rtprop_s < 0.7
    modes = [m for i, m in enumerate(down["mode"]) if i == 0 or m != down["mode"].iloc[i - 1]]
    assert modes[0] == "startup" and "probe_bw" in modes  # the pipe is filled, then probed
    assert all(pair in ALLOWED for pair in itertools.pairwise(modes)), modes
    # No loss on the infinite buffer: cwnd never below 4 segments.
    assert (down.cwnd_bytes >= 4 * MSS).all()
    # BtlBw, in payload bytes per second, ends near the downlink's payload rate: 30 kbit/s =
    # 3750 B/s of 296-byte packets carrying 256 B each → 3750 × 256 / 296 = 3243.2 B/s
    # (docs/design.md §2, "Testbed"); ±3 % for delivery-rate samples over jittered ACK intervals.
    assert 0.97 * 3243.2 < down.btlbw_bytes_per_s.max() < 1.03 * 3243.2
    for _, r in frame.iterrows():
        if r["mode"] == "probe_rtt":
            assert r.cwnd_bytes <= 4 * MSS, r
        elif r["mode"] == "probe_bw" and r.direction == "down":
            # gain × BtlBw with gain 5/4, 3/4 or 1 (in 1/256 units: 320, 192, 256), floored.
            assert r.pacing_rate_bytes_per_s in {r.btlbw_bytes_per_s * g // 256 for g in (320, 192, 256)}, r
        elif r["mode"] == "startup" and r.btlbw_bytes_per_s > 0:
            # Startup paces at 739/256 × BtlBw, or higher (there the rate only rises).
            assert r.pacing_rate_bytes_per_s >= r.btlbw_bytes_per_s * 739 // 256, r
    # Time order within each direction of each connection.
    for _, g in frame.groupby(["config_id", "replication", "connection", "direction"]):
        assert g.time_s.is_monotonic_increasing


def test_the_first_row_follows_the_configured_initial_window():
    sc = firmware("bbr")
    sc["tcp"] = {"initial_window": 10}
    sc["workload"]["resource_bytes"] = 5000
    frame = coaplab.run(sc, db=None).cc_state_frame()
    for _, first in frame.groupby("direction").head(1).iterrows():
        # 10 segments × 256 B; paced at 739/256 × 2560 B / the handshake's RTT, floored twice.
        assert first["mode"] == "startup" and first.cwnd_bytes == 10 * MSS == 2560
        assert 0 <= 739 / 256 * 2560 / first.rtprop_s - first.pacing_rate_bytes_per_s < 739 / 256 + 1


def test_the_database_table_and_the_export(runs, tmp_path):
    db, bbr, _ = runs
    api = bbr.cc_state_frame()
    with ResultsDB(db, read_only=True) as rdb:
        stored = rdb.frame("cc_state")
        reno_rows = rdb.con.execute("SELECT count(*) FROM cc_state c JOIN configs USING (config_id) "
                                    "WHERE configs.name = 'fw-newreno'").fetchone()[0]
        runs_stored = rdb.con.execute("SELECT count(*) FROM runs").fetchone()[0]
    assert runs_stored == 3 and reno_rows == 0
    assert list(stored.columns) == ["config_id", "replication", *CC_STATE_COLUMNS]
    assert len(stored) == len(api) > 0
    key = ["config_id", "replication", "connection", "direction", "time_s"]
    cols = key + ["mode", "btlbw_bytes_per_s", "rtprop_s", "pacing_rate_bytes_per_s", "cwnd_bytes"]
    pd.testing.assert_frame_equal(stored[cols].reset_index(drop=True), api[cols].reset_index(drop=True),
                                  check_dtype=False)
    paths = coaplab.execute.tidy.export(db, tmp_path, "csv")
    assert [p.name for p in paths][-2:] == ["time_sequence.csv", "cc_state.csv"]
    out = pd.read_csv(tmp_path / "cc_state.csv")
    # config_id, the varying keys (name, algorithm, buffer), then the table's own columns.
    assert list(out.columns[:1]) == ["config_id"] and list(out.columns[-10:]) == ["replication", *CC_STATE_COLUMNS]
    assert {"coap.cc", "link.buffer_bytes"} <= set(out.columns)
    assert len(out) == len(api) and set(out["coap.cc"]) == {"bbr"}
    only = coaplab.execute.tidy.export(db, tmp_path / "reno", "csv", where="coap.cc = 'newreno'")
    assert pd.read_csv(only[-1]).empty


def test_a_database_written_before_the_table_existed(runs, tmp_path):
    db, bbr, _ = runs
    old = tmp_path / "old.duckdb"
    old.write_bytes(db.read_bytes())
    with ResultsDB(old) as rdb:
        rdb.con.execute("DROP TABLE cc_state")
    with ResultsDB(old, read_only=True) as rdb:  # read as it is: the rows come from the stored results
        assert len(rdb.frame("cc_state")) == len(bbr.cc_state_frame())
    paths = coaplab.execute.tidy.export(old, tmp_path / "ex", "parquet")
    assert len(pd.read_parquet(paths[-1])) == len(bbr.cc_state_frame())
    with ResultsDB(old) as rdb:  # opened for writing: migrated, the table filled from the results
        n = rdb.con.execute("SELECT count(*) FROM cc_state").fetchone()[0]
    assert n == len(bbr.cc_state_frame())


SMALL_FIRMWARE = ('name = "fw"\nseed = 1\nreplications = 1\n[workload]\nkind = "firmware"\nclients = 1\n'
                  'resource_bytes = 20000\n[coap]\ntransport = "tcp"\ncc = "{cc}"\n')


def test_trace_csvs(cli, tmp_path):
    scen = tmp_path / "fw.toml"
    scen.write_text(SMALL_FIRMWARE.format(cc="bbr"))
    out = cli("run", scen, "--no-db", "--trace", tmp_path / "tr")
    assert out.returncode == 0, out.stderr
    (state_csv,) = (tmp_path / "tr").glob("*-cc-state.csv")
    (trace_csv,) = (tmp_path / "tr").glob("*-trace.csv")
    assert trace_csv.name.replace("-trace.csv", "") == state_csv.name.replace("-cc-state.csv", "")
    rows = list(csv.reader(state_csv.open()))
    assert tuple(rows[0]) == CC_STATE_COLUMNS
    first_down = next(r for r in rows[1:] if r[3] == "down")
    assert first_down[4] == "startup" and int(first_down[8]) == IW
    res = coaplab.run(scen, db=None, trace=True)
    assert len(rows) - 1 == len(res.cc_state_frame())
    # A stored run whose state CSV is missing is run again for it, like one without its trace CSV.
    db = tmp_path / "s.duckdb"
    assert cli("run", scen, "--db", db, "--trace", tmp_path / "tr2").returncode == 0
    (state_csv2,) = (tmp_path / "tr2").glob("*-cc-state.csv")
    state_csv2.unlink()
    out = cli("run", scen, "--db", db, "--trace", tmp_path / "tr2")
    assert out.returncode == 0 and "re-ran 1 stored run" in out.stderr, out.stderr
    assert state_csv2.read_text() == state_csv.read_text()
    # New Reno: the time-sequence CSV only.
    scen.write_text(SMALL_FIRMWARE.format(cc="newreno"))
    out = cli("run", scen, "--no-db", "--trace", tmp_path / "reno")
    assert out.returncode == 0, out.stderr
    assert [p.name.endswith("-trace.csv") for p in (tmp_path / "reno").iterdir()] == [True]


def test_time_sequence_graph_has_a_state_panel_for_bbr_only(runs, cli, tmp_path):
    db, bbr, reno = runs
    fig = bbr.plot_time_sequence(config_id=cid_of(bbr, 1410000))
    assert len(fig.axes) == 2
    seq_ax, state_ax = fig.axes
    assert seq_ax.get_shared_x_axes().joined(seq_ax, state_ax)
    assert state_ax.get_xlabel() == "time (s)" and seq_ax.get_xlabel() == ""
    svg = fig.to_svg()
    for gid in ("cc-cwnd", "cc-bdp", "cc-pacing", "mode-startup", "mode-probe_bw", "send", "ack"):
        assert f'id="{gid}' in svg, gid
    legend = reading_order(fig, fig.legends[1])
    assert legend[:3] == ["cwnd", "BDP estimate (BtlBw × RTprop)", "pacing rate × RTprop"]
    assert "Startup" in legend and "ProbeBW" in legend
    assert len(reno.plot_time_sequence().axes) == 1  # New Reno: the graph alone, as before
    # The command line, on the stored runs.
    path = tmp_path / "ts.svg"
    out = cli("plot", "--db", db, "--kind", "time-sequence", "--where", "coap.cc = 'bbr'", "--out", path)
    assert out.returncode == 0, out.stderr
    text = path.read_text()
    assert 'id="cc-cwnd"' in text and 'id="mode-startup' in text
    out = cli("plot", "--db", db, "--kind", "time-sequence", "--where", "coap.cc = 'newreno'", "--out", path)
    assert out.returncode == 0 and 'id="cc-cwnd"' not in path.read_text()
    for args, message in ((["--connection", "7"], "no time-sequence trace matches"),
                          (["--replication", "3"], "no time-sequence trace matches"),
                          (["--client", "0"], "--client: only for --kind rto")):
        out = cli("plot", "--db", db, "--kind", "time-sequence", "--out", path, *args)
        assert out.returncode == 2 and message in out.stderr, out.stderr
        assert len(out.stderr.strip().splitlines()) == 1 and "Traceback" not in out.stderr


def reading_order(fig, legend) -> list[str]:
    """A legend's entries as a reader reads them: row by row, left to right."""
    fig.canvas.draw()
    texts = [(t.get_window_extent(), t.get_text()) for t in legend.get_texts() if t.get_text()]
    return [text for box, text in sorted(texts, key=lambda bt: (-round(bt[0].y0), bt[0].x0))]


def xspan(patch) -> tuple[float, float]:
    """A band's time span (axvspan: a Rectangle since matplotlib 3.9, a Polygon before)."""
    if hasattr(patch, "get_width"):
        return (patch.get_x(), patch.get_x() + patch.get_width())
    xs = [x for x, _ in patch.get_xy()]
    return (min(xs), max(xs))


def test_report_draws_the_state_panel_for_bbr(runs):
    from coaplab.present.report import build

    db, _bbr, _ = runs
    html, ids = build(db)
    # One time-sequence graph per traced configuration: the two BBR ones carry the panel.
    assert html.count('id="cc-cwnd"') == 2 and html.count("BBR state: cwnd, the BDP estimate") == 2
    assert ids.count("timeseq-2") == 1 and "timeseq-3" not in ids


def test_state_panel_draws_the_rows():
    pts = [{"time_s": 1.0, "event": "send", "seq": 0, "length": 256},
           {"time_s": 10.0, "event": "ack", "seq": 256, "length": 0}]
    state = [{"time_s": 1.0, "mode": "startup", "btlbw_bytes_per_s": 0, "rtprop_s": None,
              "pacing_rate_bytes_per_s": 4615, "cwnd_bytes": 1024},
             {"time_s": 3.0, "mode": "drain", "btlbw_bytes_per_s": 3750, "rtprop_s": 0.64,
              "pacing_rate_bytes_per_s": 1298, "cwnd_bytes": 7168},
             {"time_s": 3.5, "mode": "probe_bw", "btlbw_bytes_per_s": 3750, "rtprop_s": 0.64,
              "pacing_rate_bytes_per_s": 4687, "cwnd_bytes": 5632}]
    fig = traces.time_sequence(pts, cc_state=state)
    ax = fig.axes[1]
    lines = {l.get_gid(): l for l in ax.get_lines()}
    # Each value held until the next row, the last until the graph's end (10 s); kB = 1000 B.
    assert list(lines["cc-cwnd"].get_xdata()) == [1.0, 3.0, 3.5, 10.0]
    assert list(lines["cc-cwnd"].get_ydata()) == [1.024, 7.168, 5.632, 5.632]
    bdp = list(lines["cc-bdp"].get_ydata())  # 3750 B/s × 0.64 s = 2400 B; none before an RTprop
    assert math.isnan(bdp[0]) and bdp[1:] == pytest.approx([2.4, 2.4, 2.4])
    # pacing × RTprop: 1298 × 0.64 = 830.72 B, 4687 × 0.64 = 2999.68 B.
    assert list(lines["cc-pacing"].get_ydata())[1:] == pytest.approx([0.83072, 2.99968, 2.99968])
    spans = {p.get_gid(): xspan(p) for p in ax.patches}
    assert spans == {"mode-startup": (1.0, 3.0), "mode-drain": (3.0, 3.5), "mode-probe_bw": (3.5, 10.0)}
    # Wide bands are labelled (Drain, 0.5 s of 9 s, is not: the legend names it).
    assert sorted(t.get_text() for t in ax.texts) == ["ProbeBW", "Startup"]
    # The lines on the first row, the modes on the second, in the order of docs/model.md.
    assert reading_order(fig, fig.legends[1]) == ["cwnd", "BDP estimate (BtlBw × RTprop)", "pacing rate × RTprop",
                                                  "Startup", "Drain", "ProbeBW"]
    # Without rows: one panel, the figure as before.
    assert len(traces.time_sequence(pts).axes) == 1 and len(traces.time_sequence(pts, cc_state=[]).axes) == 1
