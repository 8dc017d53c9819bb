"""Any TCP controller's state rows, not only BBR's (issue #23 item 1): CUBIC's phase, minimum
RTT and window reach the ``cc_state`` rows, the ``--trace`` CSV and the time-sequence graph's
state panel through the controller's snapshot, without Python knowing CUBIC by name.

Expected values: MSS = MTU 296 − 40 = 256 B, initial window 4 segments = 1024 B
(docs/model.md); CUBIC has no bandwidth estimate and does not pace, so those columns are 0
(docs/model.md "CUBIC", "Traces")."""

import csv

import coaplab
from coaplab.describe.scenario import CC_STATE_CONTROLLERS, TCP_CONTROLLERS
from coaplab.execute.store import CC_STATE_COLUMNS

IW = 4 * (296 - 40)

SCENARIO = ('name = "fw"\nseed = 1\nreplications = 1\ntrace = true\n[workload]\nkind = "firmware"\nclients = 1\n'
            'resource_bytes = 20000\n[link]\nbuffer_bytes = 2500\n[coap]\ntransport = "tcp"\ncc = "{cc}"\n')


def test_the_controllers_with_state_come_from_the_registry():
    assert TCP_CONTROLLERS[:3] == ("newreno", "bbr", "cubic")  # the registry order; the first is the default
    assert "newreno" not in CC_STATE_CONTROLLERS and {"bbr", "cubic"} <= set(CC_STATE_CONTROLLERS)  # New Reno: window only


def test_cubic_rows_graph_and_csv(cli, tmp_path):
    scen = tmp_path / "fw.toml"
    scen.write_text(SCENARIO.format(cc="cubic"))
    res = coaplab.run(scen, db=None, jobs=1)
    f = res.cc_state_frame()
    down = f[f.direction == "down"].sort_values("time_s")
    first = down.iloc[0]
    assert (first["mode"], first["cwnd_bytes"]) == ("slow_start", IW)
    # The 2500 B buffer drops segments of a 20000 B transfer: CUBIC leaves slow start.
    assert set(down["mode"]) == {"slow_start", "avoidance"}
    assert (f.btlbw_bytes_per_s == 0).all() and (f.pacing_rate_bytes_per_s == 0).all()
    assert (down.rtprop_s.dropna() > 0).all() and down.rtprop_s.notna().any()
    fig = res.plot_time_sequence()
    assert len(fig.axes) == 2
    svg = fig.to_svg()
    assert 'id="cc-cwnd"' in svg and 'id="mode-slow_start' in svg and 'id="cc-bdp"' not in svg
    out = cli("run", scen, "--no-db", "--trace", tmp_path / "tr")
    assert out.returncode == 0, out.stderr
    (state_csv,) = (tmp_path / "tr").glob("*-cc-state.csv")
    rows = list(csv.reader(state_csv.open()))
    assert tuple(rows[0]) == CC_STATE_COLUMNS and len(rows) - 1 == len(f)
