"""Multi-hop IEEE 802.15.4 meshes, the GPRS preset and the periodic workload from the Python
front (docs/networks.md): validation, the resolved configuration, the `mesh` summary, and the
reproduce targets."""

import pytest

import coaplab
from coaplab.errors import ScenarioError
from coaplab.reproduce import available, load
from coaplab.scenario import resolve

PERIODIC = {"kind": "periodic", "clients": 20, "period_s": 2.0, "duration_s": 20.0, "request_bytes": 95,
            "response_bytes": 0}


def test_new_keys_are_absent_unless_given():
    # Existing configurations keep their identity: no periodic or mesh keys appear.
    c = resolve({"network": {"kind": "star"}})
    assert c["network"] == {"kind": "star"}
    assert "period_s" not in c["workload"] and "request_bytes" not in c["workload"]
    c = resolve({"workload": PERIODIC, "network": {"kind": "grid", "mac_queue_frames": 8}})
    assert c["workload"]["period_s"] == 2.0 and c["workload"]["request_bytes"] == 95
    assert c["network"] == {"kind": "grid", "mac_queue_frames": 8}


@pytest.mark.parametrize(
    "raw, fragment",
    [
        ({"workload": {"kind": "periodic", "duration_s": 10}}, 'workload.period_s: required when workload.kind = "periodic"'),
        ({"workload": {"kind": "periodic", "period_s": 1}}, 'workload.duration_s: required when workload.kind = "periodic"'),
        ({"workload": {"period_s": 1}}, 'workload.period_s: only meaningful when workload.kind = "periodic"'),
        ({"workload": {**PERIODIC, "request_bytes": 61}}, "workload.request_bytes: 61 is not allowed"),
        ({"workload": {**PERIODIC, "request_bytes": 59}}, "workload.request_bytes: 59 is out of range"),
        ({"workload": PERIODIC, "coap": {"transport": "tcp", "cc": "newreno"}}, '"periodic" is a CoAP-over-UDP workload'),
        ({"network": {"kind": "mesh"}}, 'network.kind: "mesh" is not allowed; expected one of star, chain, grid, dumbbell, gprs, file'),
        ({"network": {"kind": "grid", "mac_max_be": 9}}, "network.mac_max_be: 9 is out of range"),
        ({"network": {"kind": "file", "nodes": "a"}}, 'network.nodes: "a" is not allowed; expected a list'),
    ],
)
def test_bad_network_and_periodic_keys(raw, fragment):
    with pytest.raises(ScenarioError) as e:
        resolve(raw)
    assert fragment in str(e.value)


def test_a_mesh_run_reports_the_mesh_and_a_star_run_does_not():
    res = coaplab.run({"name": "m", "workload": PERIODIC, "network": {"kind": "chain"}}, db=None)
    m = res.summaries[0]["mesh"]
    # 20 clients, a request every 2 s for 20 s: 200 created; 95 B each: 200 × 95 × 8 / 20 s
    # = 7600 bit/s = 7.6 kbit/s offered.
    assert m["requests_generated"] == 200
    assert m["offered_kbps"] == pytest.approx(7.6)
    assert 0 < m["carried_kbps"] <= m["offered_kbps"]
    # The chain's clients are 1 to 10 hops from the sink, two at each distance.
    assert list(m["by_hops"]) == [str(h) for h in range(1, 11)]
    assert all(b["clients"] == 2 for b in m["by_hops"].values())
    assert "mesh_collisions" in res.runs_frame().columns
    star = coaplab.run({"name": "s", "workload": {"clients": 2, "exchanges": 2}}, db=None)
    assert "mesh" not in star.summaries[0]


def test_a_file_mesh_needs_one_border_router(cli, tmp_path):
    p = tmp_path / "bad.toml"
    p.write_text('[network]\nkind = "file"\nnodes = [{x = 0.0, y = 0.0, role = "client"}, {x = 5.0, y = 0.0, role = "sink"}]\n')
    out = cli("run", p, "--no-db")
    assert out.returncode == 2
    assert out.stderr.strip() == 'coaplab: error: network.nodes: 0 nodes have role "border-router"; allowed: exactly one'


def test_unreachable_nodes_are_refused(cli, tmp_path):
    p = tmp_path / "far.toml"
    p.write_text('[network]\nkind = "file"\nnodes = [{x = 0.0, y = 0.0, role = "border-router"}, '
                 '{x = 5.0, y = 0.0, role = "sink"}, {x = 50.0, y = 0.0, role = "client"}]\n')
    out = cli("run", p, "--no-db")
    assert out.returncode == 2
    assert "node 2 cannot reach the border router" in out.stderr


def test_the_reproduce_targets_are_shipped_and_valid():
    names = available()
    for name in ("cooja-chain", "cooja-grid", "cooja-dumbbell", "gprs-continuous", "gprs-burst",
                 "flocklab-continuous", "flocklab-burst"):
        assert name in names
        assert load(name).configurations()
    # The Cooja targets: NSTART 1 and 4 × three algorithms × 10 (grid 11) offered loads.
    assert len(load("cooja-grid").configurations()) == 2 * 3 * 11
    assert len(load("cooja-dumbbell").configurations()) == 2 * 3 * 10
    assert len(load("gprs-continuous").configurations()) == 4 * 6


def test_reproduce_prints_loads_for_a_mesh(cli):
    out = cli("reproduce", "flocklab-burst", "--no-db")
    assert out.returncode == 0, out.stderr
    assert out.stdout.count("offered ") == 3 and "carried " in out.stdout


def test_lossy_links_name_existing_nodes(cli, tmp_path):
    p = tmp_path / "ll.toml"
    p.write_text('[network]\nkind = "chain"\nlossy_links = [{a = 3, b = 40, loss = 0.5}]\n')
    out = cli("run", p, "--no-db")
    assert out.returncode == 2
    assert "network.lossy_links: {a = 3, b = 40} is not a link between two of the 21 nodes" in out.stderr
