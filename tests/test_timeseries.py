"""Time series of traced runs (docs/model.md "Time series"): the bottleneck buffers' occupancy at
every change and each direction's delivered throughput per 100 ms bin, recorded only with
``trace = true``, stored with the run, exported, drawn by ``coaplab plot --kind queue|throughput``
and by the report. The exact occupancy steps of a hand-computed two-packet run are pinned in the
engine (crates/engine/src/net/link.rs, ``a_two_packet_run_gives_the_exact_occupancy_steps``)."""

import pytest

import coaplab
from coaplab.present import traces

# Five clients, each fetching five 40 B responses through the reference star's 2500 B buffer.
SCEN = {"name": "ts", "replications": 1, "workload": {"clients": 5, "exchanges": 5}}


@pytest.fixture(scope="module")
def traced(tmp_path_factory):
    db = tmp_path_factory.mktemp("ts") / "ts.duckdb"
    return db, coaplab.run({**SCEN, "trace": True}, db=db)


def test_tracing_changes_no_result():
    plain = coaplab.run(SCEN)
    traced = coaplab.run({**SCEN, "trace": True})
    # The configuration (its trace key, hence its id) and the wall time aside, every number is equal.
    strip = lambda s: {k: v for k, v in s.items() if k not in ("wall_s", "config", "config_id")}
    assert [strip(s) for s in plain.summaries] == [strip(s) for s in traced.summaries]
    assert all("timeseries" not in r for runs in plain.runs.values() for r in runs)


def test_the_series_agree_with_the_run_counters(traced):
    _, res = traced
    (run,) = next(iter(res.runs.values()))
    p = run["packets"]
    q = res.queue_frame()
    down = q[q.direction == "down"]
    # The largest occupancy of the series is the run's max_queue_bytes (downlink).
    assert down.queue_bytes.max() == p["max_queue_bytes"] > 0
    # Every buffer empties again: the last change of each direction is to 0 B.
    assert (q.groupby("direction").queue_bytes.last() == 0).all()
    t = res.throughput_frame()
    assert set(t.bin_s) == {0.1}
    # No link errors: every serialized byte is delivered, so the bins add up to the bytes the
    # link counted (kbit/s × 0.1 s × 1000 / 8 = bytes).
    for d, key in (("down", "bytes_downlink"), ("up", "bytes_uplink")):
        assert round((t[t.direction == d].kbps * 0.1 * 1000 / 8).sum()) == p[key] > 0
    # The series are frames of their own, not a column of lists in the runs' frame.
    assert "timeseries" not in res.runs_frame().columns


def test_a_mesh_run_has_no_link_series():
    res = coaplab.run({"name": "m", "replications": 1, "trace": True, "network": {"kind": "chain"},
                       "workload": {"kind": "periodic", "clients": 3, "duration_s": 20.0, "period_s": 5.0,
                                    "request_bytes": 95, "response_bytes": 0}})
    assert res.queue_frame().empty
    assert all("timeseries" not in r for runs in res.runs.values() for r in runs)


def test_plot_queue_and_throughput_from_the_database(traced, cli, tmp_path):
    db, _ = traced
    for kind in ("queue", "throughput"):
        out = cli("plot", "--db", db, "--kind", kind, "--out", tmp_path / f"{kind}.png")
        assert out.returncode == 0, out.stderr
        assert (tmp_path / f"{kind}.png").stat().st_size > 10_000
    bad = cli("plot", "--db", db, "--kind", "queue", "--client", "1", "--out", tmp_path / "x.png")
    assert bad.returncode == 2 and "--client: not for --kind queue" in bad.stderr
    none = cli("plot", "--db", db, "--kind", "throughput", "--replication", "3", "--out", tmp_path / "x.png")
    assert none.returncode == 2 and "no throughput time series matches" in none.stderr


def test_a_truncated_series_says_so():
    from coaplab.execute.store import series_note

    run = {"timeseries": [{"truncated_at_s": 3600.0}, {"truncated_at_s": None}]}
    assert series_note(run) == " (recorded until 3600.0 s: the cap)"
    assert series_note({"timeseries": [{}]}) == ""


def test_plot_from_python(traced):
    _, res = traced
    assert res.plot_queue().axes[0].get_ylabel() == "bytes in the buffer"
    assert res.plot_throughput(width="one").axes[0].get_ylabel() == "delivered kbit/s (100 ms bins)"
    with pytest.raises(coaplab.CoaplabError, match="no time series for config"):
        res.plot_queue(replication=5)


def test_the_queue_figure_draws_the_steps():
    # 0 B until 1.0 s, 93 B until 1.2 s, then 0 B to the end of the run (3 s).
    pts = [{"direction": "down", "time_s": 0.0, "queue_bytes": 0}, {"direction": "down", "time_s": 1.0, "queue_bytes": 93},
           {"direction": "down", "time_s": 1.2, "queue_bytes": 0}]
    fig = traces.queue_occupancy(pts, end_s=3.0)
    (line,) = fig.axes[0].get_lines()
    assert list(line.get_xdata()) == [0.0, 1.0, 1.2, 3.0]
    assert list(line.get_ydata()) == [0, 93, 0, 0]
    assert fig.axes[0].get_ylim()[0] == 0


def test_the_report_draws_the_series_of_traced_runs(traced):
    from coaplab.present import report

    db, _ = traced
    html, ids = report.build(db)
    assert {"queue-0", "throughput-0"} <= set(ids)
    assert 'data-table="series-list"' in html
