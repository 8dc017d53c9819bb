"""The smaller frictions of the researcher's workflow (issue 37, item 6): the sweep lock's file,
error wording, suggestions, `compare`'s hint."""

import os

import pytest

import coaplab
from coaplab.describe.scenario import load_scenario
from coaplab.errors import ScenarioError


def test_the_sweep_lock_file_is_removed_when_the_run_ends(tmp_path):
    db = tmp_path / "r.duckdb"
    coaplab.run({"name": "l", "replications": 1, "workload": {"clients": 1, "exchanges": 2}}, db=db)
    assert db.exists() and not (tmp_path / "r.duckdb.sweep-lock").exists()


def test_a_stale_sweep_lock_is_taken_over_and_removed(tmp_path):
    # A killed sweep leaves its file with its PID; nobody holds the flock: the next run takes it.
    db = tmp_path / "r.duckdb"
    lock = tmp_path / "r.duckdb.sweep-lock"
    lock.write_text("PID 999999")
    res = coaplab.run({"name": "l", "replications": 1, "workload": {"clients": 1, "exchanges": 2}}, db=db)
    assert res.executed == 1 and not lock.exists()
    assert sorted(os.listdir(tmp_path)) == ["r.duckdb"]


def test_an_error_in_the_base_file_is_not_blamed_on_the_sweep():
    with pytest.raises(ScenarioError) as e:
        load_scenario({"workload": {"clients": -3}, "sweep": {"coap.cc": ["default", "cocoa"]}})
    assert str(e.value) == "workload.clients: -3 is out of range; expected an integer >= 1 and <= 100000"
    # A swept value's own error still names its configuration.
    with pytest.raises(ScenarioError, match=r"\(in the sweep configuration workload.clients = -3\)$"):
        load_scenario({"sweep": {"workload.clients": [1, -3]}})


@pytest.mark.parametrize("key, message", [
    # A short section: its keys.
    ("tcp.nagel", 'sweep.tcp.nagel: unknown key (did you mean "tcp.nagle"?); keys of [tcp]: tcp.initial_window,'),
    # A long one: the closest few of its keys (85: the 75 before the GPRS preset gained
    # gprs_ul_ack_interval_blocks, gprs_bs_cv_max, gprs_dl_tbf_setup_ms and gprs_dl_tbf_idle_ms,
    # Contiki's profile five keys of its missing mechanisms, and the cells admission_backlog_s).
    ("network.mac_queue_frame", ('sweep.network.mac_queue_frame: unknown key (did you mean'
                                 ' "network.mac_queue_frames"?); closest of the 85 keys of [network]: ')),
    # No section: the closest keys, then what a sweep key is.
    ("replication", ('sweep.replication: unknown key (did you mean "replications"?); closest of the')),
])
def test_an_unknown_sweep_key_shows_the_closest_keys_not_all(key, message):
    with pytest.raises(ScenarioError) as e:
        load_scenario({"sweep": {key: [1]}})
    assert str(e.value).startswith(message)
    assert len(str(e.value)) < 450 and "link.downlink_kbps" not in str(e.value)  # not the ~150 keys


def test_a_mistyped_scorecard_target_gets_a_suggestion(cli):
    out = cli("scorecard", "cocao", "--no-db")
    assert out.returncode == 2 and len(out.stderr.strip().splitlines()) == 1
    assert "TARGET: 'cocao' is not a registered algorithm (did you mean cocoa?); allowed: default," in out.stderr


def test_differing_keys_by_hand():
    from coaplab.execute.tidy import differing_keys

    a = [{"name": "x", "link.errors": "none", "coap.cc": "default"}, {"name": "x", "link.errors": "none", "coap.cc": "cocoa"}]
    b = [{"name": "y", "link.errors": "low", "coap.cc": "cocoa"}]
    # coap.cc shares "cocoa"; link.errors shares nothing; name is never a reason.
    assert differing_keys(a, b) == {"link.errors": (["none"], ["low"])}


def test_compare_says_which_keys_keep_two_studies_apart(cli, tmp_path):
    base = 'name = "e"\nreplications = 2\n[workload]\nclients = 2\nexchanges = 3\n[link]\nerrors = "{}"\n'
    for db, errors in (("A", "none"), ("B", "low")):
        (tmp_path / f"{db}.toml").write_text(base.format(errors))
        assert cli("run", tmp_path / f"{db}.toml", "--db", tmp_path / f"{db}.duckdb", "--no-progress").returncode == 0
    out = cli("compare", "--db", tmp_path / "A.duckdb", "--db", tmp_path / "B.duckdb")
    assert out.returncode == 0
    assert ("no configuration matched: the studies differ in link.errors (A: none; B: low); to compare them anyway:"
            " --ignore link.errors") in out.stdout
    out = cli("compare", "--db", tmp_path / "A.duckdb", "--db", tmp_path / "B.duckdb", "--ignore", "link.errors")
    assert ": 1 configurations;" in out.stdout and "no configuration matched" not in out.stdout
    out = cli("compare", "--db", tmp_path / "A.duckdb", "--db", tmp_path / "B.duckdb", "--format", "json")
    assert "--ignore link.errors" in out.stderr


def test_setup_names_its_steps_and_prints_no_colour_codes_into_logs():
    # scripts/main.sh runs scripts/setup.sh (minutes cold): each step is named, and with stdout
    # not a terminal the tools are told to print no colour codes (no `^[[0m` in logs).
    from conftest import ROOT

    text = (ROOT / "scripts/setup.sh").read_text()
    assert 'if [ ! -t 1 ]; then' in text and "CARGO_TERM_COLOR=never" in text and "NO_COLOR=1" in text
    assert "-Dstyle.color=never" in text and "cargo build --release -q" not in text
    steps = [ln for ln in text.splitlines() if ln.strip().startswith("step ")]
    assert len(steps) >= 5  # venv, pip, the engine, the emulator, done


def _mesh_summary(cc, period, offered, drops_per_run, retry_per_run):
    config = {"name": "m", "coap": {"cc": cc}, "workload": {"period_s": period}}
    runs = [{"mesh": {"offered_kbps": offered, "mac_queue_drops": q, "retry_failures": r}}
            for q, r in zip(drops_per_run, retry_per_run)]
    s = {"config": config, "config_id": f"{cc}-{period}", "replications": len(runs), "name": "m",
         "mesh": {"offered_kbps": offered, "mac_queue_drops": sum(drops_per_run), "retry_failures": sum(retry_per_run)}}
    return s, runs


def test_drop_causes_leave_out_a_cause_nobody_had_and_whisker_the_replications():
    from coaplab.present import figures

    made = [_mesh_summary("default", 2.0, 4.0, [10, 20, 60], [0, 1, 0]),
            _mesh_summary("default", 1.0, 8.0, [100, 110, 120], [0, 0, 2])]
    fig = figures.drop_cause_curves([s for s, _ in made], runs={s["config_id"]: r for s, r in made})
    axes = [ax for ax in fig.axes if ax.get_visible()]
    # Queue overflow and retry limit; no collision row (every collision counter is 0 or absent).
    assert [ax.get_ylabel().split("\n")[0] for ax in axes] == ["queue overflow", "retry limit"]
    # Queue drops: means 30 and 110 per run, whiskers 10–60 and 100–120 (the replications' range).
    line = axes[0].lines[0]
    assert list(line.get_xdata()) == [4.0, 8.0] and list(line.get_ydata()) == [30.0, 110.0]
    segments = axes[0].collections[0].get_segments()
    assert [(seg[0][1], seg[1][1]) for seg in segments] == [(10.0, 60.0), (100.0, 120.0)]


def test_a_dense_queue_is_drawn_as_its_envelope_by_hand():
    from coaplab.present.traces import step_envelope

    # 0 B until 1 s, 10 B until 2 s, then 0 B until 4 s; two bins of 2 s: the first averages
    # (0·1 + 10·1) / 2 = 5 B and spans 0–10 B, the second is 0 B throughout.
    edges, mean, lo, hi = step_envelope([(0.0, 0.0), (1.0, 10.0), (2.0, 0.0), (4.0, 0.0)], 2)
    assert list(edges) == [0.0, 2.0, 4.0] and list(mean) == [5.0, 0.0]
    assert list(lo) == [0.0, 0.0] and list(hi) == [10.0, 0.0]


def test_the_histogram_has_a_log_axis_on_request(cli, tmp_path):
    from coaplab.present import figures

    s = {"config": {"name": "h", "coap": {"cc": "default"}}, "name": "h", "config_id": "x", "replications": 1,
         "retransmission_histogram": [9990, 9, 1]}
    ax = figures.retransmission_histogram([s], log_y=True).axes[0]
    assert ax.get_yscale() == "log" and ax.get_ylim() == (0.01, 100)
    assert figures.retransmission_histogram([s]).axes[0].get_yscale() == "linear"
    out = cli("plot", "--kind", "load", "--log-y", "--out", tmp_path / "x.png", "--db", tmp_path / "none.duckdb")
    assert out.returncode == 2 and "--log-y: only for --kind fct or histogram, not load" in out.stderr


def test_the_quick_battery_says_what_it_runs():
    from coaplab.suites.scorecard import load_battery

    full = {s["id"]: s["title"] for s in load_battery("full").scenarios}
    quick = {s["id"]: s["title"] for s in load_battery("quick").scenarios}
    assert "400 continuous and random clients, four buffers" in full["collapse"]
    assert quick["collapse"].startswith("Congestion collapse") and "100 continuous and random clients" in quick["collapse"]
    assert all("(quick:" in t for t in quick.values()) and not any("(quick:" in t for t in full.values())


def test_scorecard_bars_have_whiskers_a_legend_above_and_titles_not_keys():
    import coaplab.suites.scorecard as sc

    def s(cc, jains):
        return {"config": {"coap": {"cc": cc}, "workload": {"clients": 30}}, "swept": {"coap.cc": cc, "workload.clients": 30},
                "jain_fairness": sum(jains) / len(jains), "replication_values": {"jain_fairness": jains}}

    fig = sc._scenario_figure("gprs", [s("cocoa", [0.90, 1.0]), s("default", [0.95, 0.95])])
    ax = fig.axes[0]
    assert ax.get_legend() is None and len(fig.legends) == 1  # above the bars, not over them
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["cocoa", "default"]
    assert ax.get_xlabel() == "clients" and ax.get_ylabel() == "Jain's index\n(mean; whiskers min–max)"
    # cocoa: mean 0.95, whisker 0.90–1.00 (the replications); default's replications agree: 0.95–0.95.
    segments = [seg for coll in ax.collections for seg in coll.get_segments()]
    assert [(round(seg[0][1], 6), round(seg[1][1], 6)) for seg in segments] == [(0.9, 1.0), (0.95, 0.95)]


def test_a_client_groups_key_is_titled_not_printed_raw():
    from coaplab.execute.tidy import title

    assert title("group.target.coap.cc") == "algorithm of group target"
    assert title("workload.burst_clients") == "burst clients"


def test_an_engine_error_of_the_base_file_is_not_blamed_on_the_sweep():
    from coaplab.errors import CoaplabError

    base = {"name": "x", "link": {"mtu": 68}, "workload": {"clients": 2, "exchanges": 2, "response_bytes": 2000}}
    with pytest.raises(CoaplabError) as e:
        coaplab.run({**base, "sweep": {"coap.cc": ["default", "cocoa"]}})
    assert str(e.value).startswith("link.mtu: 68 B is smaller than the workload's largest packet")
    assert "sweep configuration" not in str(e.value)
    swept = {**base, "link": {}, "sweep": {"link.mtu": [4000, 68]}}
    with pytest.raises(CoaplabError, match=r"\(in the sweep configuration link.mtu = 68\)$"):
        coaplab.run(swept)
