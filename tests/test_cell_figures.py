"""The cell figures (docs/networks.md "Cell figures"): a traced device's radio state bands
(``cell_timeline`` → ``analyse/timeline.py`` → ``…-cell-timeline.csv``), ``coaplab plot --kind
state-timeline`` and ``--kind coupling-loss``, and their bad inputs. The engine's timeline of a
lone device is checked against the hand timeline of docs/networks.md "One exchange from idle,
subframe by subframe" in crates/engine/src/net/cellular/timeline.rs
(``a_lone_device_s_timeline_is_the_hand_timeline``)."""

import csv
import itertools

import pytest

import coaplab
from coaplab.analyse.timeline import bands, state_totals

# One NB-IoT device at 130 dB (level 0), 3 exchanges, traced.
CELL = {"name": "cell-tl", "replications": 1, "trace": True,
        "network": {"kind": "nbiot", "coupling_loss_db": 130.0, "rai": True},
        "workload": {"kind": "periodic", "clients": 1, "period_s": 30.0, "duration_s": 90.0}}


def test_bands_by_hand():
    # Idle 0–1 s, connected 1–5 s (tx 1.2–1.3, rx 1.25–1.5: the overlap is tx, rx 1.3–1.5),
    # idle 5–7 s, PSM from 7 s to the end at 9 s.
    t = {"device": 0, "end_s": 9.0,
         "modes": [[0.0, "idle"], [1.0, "connected"], [5.0, "idle"], [7.0, "psm"]],
         "spans": [[1.2, 1.3, "tx"], [1.25, 1.5, "rx"], [2.0, 2.0, "rx"]]}
    assert bands(t) == [(0.0, 1.0, "idle_drx"), (1.0, 1.2, "connected_idle"), (1.2, 1.3, "tx"),
                        (1.3, 1.5, "rx"), (1.5, 5.0, "connected_idle"), (5.0, 7.0, "idle_drx"), (7.0, 9.0, "psm")]
    tot = state_totals(bands(t))
    # idle 1 + 2 = 3 s; connected idle 0.2 + 3.5 = 3.7 s; PSM 2 s; tx 0.1 s; rx 0.2 s: 9 s in all.
    assert tot == pytest.approx({"tx": 0.1, "rx": 0.2, "connected_idle": 3.7, "idle_drx": 3.0, "psm": 2.0})


@pytest.fixture(scope="module")
def traced(tmp_path_factory):
    d = tmp_path_factory.mktemp("cell")
    res = coaplab.run(CELL, db=d / "cell.duckdb", trace_dir=d / "traces")
    return d, res


def test_the_timeline_csv_agrees_with_the_state_times(traced):
    d, res = traced
    [f] = sorted((d / "traces").glob("*-cell-timeline.csv"))
    with f.open() as fh:
        rows = list(csv.DictReader(fh))
    assert list(rows[0]) == ["device", "start_s", "end_s", "state"]
    got = [(float(r["start_s"]), float(r["end_s"]), r["state"]) for r in rows]
    # Bands tile the run: each starts where the previous ended, from 0 to the run's end.
    assert got[0][0] == 0.0 and all(a[1] == b[0] for a, b in itertools.pairwise(got))
    assert got[-1][1] == pytest.approx(res.runs[res.summaries[0]["config_id"]][0]["sim_time_s"])
    # Transmit time: the timeline's spans against the energy accounting's counter (power.rs),
    # two separate records of the same subframes.
    tx = sum(b - a for a, b, s in got if s == "tx")
    assert tx == pytest.approx(res.summaries[0]["energy"]["state_time_s"]["tx"], abs=1e-9)
    # Three reports from idle (release assistance): three connected spells.
    states = [s for _, _, s in got]
    assert sum(1 for a, b in itertools.pairwise(states) if a == "idle_drx" and b != "idle_drx") == 3


def test_tracing_changes_no_cell_result():
    plain = coaplab.run({**CELL, "trace": False})
    traced = coaplab.run(CELL)
    strip = lambda s: {k: v for k, v in s.items() if k not in ("wall_s", "config", "config_id")}
    assert [strip(s) for s in plain.summaries] == [strip(s) for s in traced.summaries]
    assert all("cell_timeline" not in r for runs in plain.runs.values() for r in runs)


def test_plot_state_timeline(traced, cli, tmp_path):
    d, _ = traced
    out = cli("plot", "--db", d / "cell.duckdb", "--kind", "state-timeline", "--out", tmp_path / "s.svg")
    assert out.returncode == 0, out.stderr
    svg = (tmp_path / "s.svg").read_text()
    assert "transmit" in svg and "request sent" in svg and "response received" in svg


def test_plot_coupling_loss(cli, tmp_path):
    db = tmp_path / "loss.duckdb"
    coaplab.run({"name": "loss", "replications": 1, "network": {"kind": "nbiot", "rai": True},
                 "workload": {"kind": "periodic", "clients": 2, "period_s": 60.0, "duration_s": 120.0},
                 "sweep": {"network.coupling_loss_db": [130.0, 150.0], "coap.cc": ["default", "cocoa"]}}, db=db)
    out = cli("plot", "--db", db, "--kind", "coupling-loss", "--out", tmp_path / "l.png")
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "l.png").stat().st_size > 10_000
    # coaplab report draws it for a cell sweep over the coupling loss (and only there).
    from coaplab.present.report import build

    _, ids = build(db)
    assert "coupling-loss-0" in ids
    bad = cli("plot", "--db", db, "--kind", "coupling-loss", "--hue", "coap.nope", "--out", tmp_path / "x.png")
    assert bad.returncode == 2 and "--hue: 'coap.nope' is not a key of the cell runs" in bad.stderr


@pytest.mark.parametrize("args, line", [
    (("--kind", "state-timeline"), "no cell state timeline matches"),
    (("--kind", "coupling-loss"), "--kind coupling-loss: no runs on an NB-IoT or LTE-M cell"),
    (("--kind", "fct", "--window", "0:1"), "--window: only for --kind state-timeline"),
    (("--kind", "coupling-loss", "--col", "coap.cc"), "--col: not for --kind coupling-loss"),
])
def test_bad_input_on_a_star_run_is_one_line(cli, tmp_path, args, line):
    db = tmp_path / "star.duckdb"
    coaplab.run({"name": "star", "replications": 1, "trace": True, "workload": {"clients": 1, "exchanges": 2}}, db=db)
    out = cli("plot", "--db", db, *args, "--out", tmp_path / "x.png")
    assert out.returncode == 2 and line in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1 and "Traceback" not in out.stderr


@pytest.mark.parametrize("window", ["5:1", "a:b", "3", "2:2"])
def test_a_bad_window_is_one_line(traced, cli, tmp_path, window):
    d, _ = traced
    out = cli("plot", "--db", d / "cell.duckdb", "--kind", "state-timeline", "--window", window, "--out", tmp_path / "x.png")
    assert out.returncode == 2 and "--window:" in out.stderr and "START:END" in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1


def test_the_cell_targets_are_listed(cli):
    out = cli("reproduce", "--list")
    for name in ("cell-study-400", "cell-firmware", "cell-coupling-loss", "cell-study-400-udp", "cell-firmware-nb2"):
        assert name in out.stdout


def test_a_cell_run_without_trace_has_no_timeline_to_draw(cli, tmp_path):
    db = tmp_path / "plain.duckdb"
    coaplab.run({**CELL, "trace": False}, db=db)
    out = cli("plot", "--db", db, "--kind", "state-timeline", "--out", tmp_path / "x.png")
    assert out.returncode == 2 and "no cell state timeline matches: run a scenario on an nbiot or ltem cell with trace = true" in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1
