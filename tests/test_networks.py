"""Multi-hop IEEE 802.15.4 meshes, the GPRS preset and the periodic workload from the Python
front (docs/networks.md): validation, the resolved configuration, the `mesh` summary, and the
reproduce targets."""

import pytest

import coaplab
from coaplab.describe.scenario import resolve
from coaplab.errors import ScenarioError
from coaplab.suites.reproduce import available, load

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
    # Cooja 2.6's medium: UDGM's interference range is 2 x range and MSPSim's CC2420 sensed
    # every signal UDGM gives there (-95 dBm), so carrier sense reaches it too
    # (docs/validation.md, "Cooja's carrier sense"). The engine's defaults are 2 and 1.
    for name in ("cooja-chain", "cooja-grid", "cooja-dumbbell"):
        for c in load(name).configurations():
            net = c["network"]
            assert net["mac"] == "contiki" and net["contiki_autoack"] is True
            assert net["carrier_sense_factor"] == 2.0
            assert net.get("interference_factor", 2.0) == 2.0
    # The CoCoA study's GPRS targets: 4 client counts (continuous) or 3 burst sizes × six
    # algorithms, 15 replications, Californium's MAX_RETRANSMIT 4.
    for name, n in (("cocoa2016-gprs-continuous", 4 * 6), ("cocoa2016-gprs-burst", 3 * 6)):
        configs = load(name).configurations()
        assert len(configs) == n
        assert all(c["replications"] == 15 and c["coap"]["max_retransmit"] == 4 for c in configs)


def test_reproduce_prints_loads_for_a_mesh(cli):
    out = cli("reproduce", "flocklab-burst", "--no-db", "--details")
    assert out.returncode == 0, out.stderr
    assert out.stdout.count("offered ") == 3 and "carried " in out.stdout


def test_lossy_links_name_existing_nodes(cli, tmp_path):
    p = tmp_path / "ll.toml"
    p.write_text('[network]\nkind = "chain"\nlossy_links = [{a = 3, b = 40, loss = 0.5}]\n')
    out = cli("run", p, "--no-db")
    assert out.returncode == 2
    assert "network.lossy_links: {a = 3, b = 40} is not a link between two of the 21 nodes" in out.stderr


@pytest.mark.parametrize(
    "line, message",
    [
        ("gprs_coding_scheme = 5", "network.gprs_coding_scheme: 5 is out of range; expected an integer >= 1 and <= 4"),
        ("gprs_uplink_timeslots = 0", "network.gprs_uplink_timeslots: 0 is out of range; expected an integer >= 1 and <= 8"),
        ("gprs_block_error_rate = 1.0", "network.gprs_block_error_rate: 1.0 is out of range; expected a number >= 0 and <= 0.99"),
        ("gprs_fade_block_error_rate = -0.1", "network.gprs_fade_block_error_rate: -0.1 is out of range; expected a number >= 0 and <= 0.99"),
        ("gprs_tbf_setup_ms = -1", "network.gprs_tbf_setup_ms: -1 is out of range; expected a number >= 0 and <= 1e+07"),
        ("gprs_fade_interval_ms = 0", "network.gprs_fade_interval_ms: 0 is out of range; expected a number >= 0.001 and <= 1e+07"),
        ("gprs_ack_blocks = -2", "network.gprs_ack_blocks: -2 is out of range"),
        ("gprs_bs_cv_max = 16", "network.gprs_bs_cv_max: 16 is out of range; expected an integer >= 0 and <= 15"),
        ("gprs_ul_ack_interval_blocks = 1001", "network.gprs_ul_ack_interval_blocks: 1001 is out of range; expected an integer >= 0 and <= 1000"),
        ("gprs_dl_tbf_setup_ms = -5", "network.gprs_dl_tbf_setup_ms: -5 is out of range; expected a number >= 0 and <= 1e+07"),
        ("gprs_dl_tbf_idle_ms = 1e8", "network.gprs_dl_tbf_idle_ms: 100000000.0 is out of range; expected a number >= 0 and <= 1e+07"),
    ],
)
def test_bad_gprs_keys_are_refused_in_one_line(cli, tmp_path, line, message):
    # The GPRS radio's keys (docs/networks.md "The GPRS preset"): one line naming the key, the
    # value and what is allowed, exit 2, nothing run.
    p = tmp_path / "gprs.toml"
    p.write_text(f'[network]\nkind = "gprs"\n{line}\n')
    out = cli("run", p, "--no-db")
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"coaplab: error: {message}"), out.stderr
    assert out.stdout == ""


def test_gprs_radio_keys_are_absent_unless_given():
    # Configurations that do not set the new keys keep their identity (docs/networks.md).
    c = resolve({"network": {"kind": "gprs"}})
    assert c["network"] == {"kind": "gprs"}
    c = resolve({"network": {"kind": "gprs", "gprs_coding_scheme": 2, "gprs_uplink_kbps": 15}})
    assert c["network"] == {"kind": "gprs", "gprs_coding_scheme": 2, "gprs_uplink_kbps": 15}


# ---- FlockLab as the CoCoA study wired it: servers only, one outside client per sink --------

_SINKS = ('nodes = [{x = 0.0, y = 0.0, role = "border-router"}, {x = 10.0, y = 0.0, role = "sink"}, '
          '{x = 20.0, y = 0.0, role = "sink"}]\n')


@pytest.mark.parametrize(
    "workload, network, line",
    [
        # One outside client per sink: 2 sinks, no mesh client, so exactly 2 clients.
        ("clients = 3", "outside_clients_per_sink = true",
         ("workload.clients: 3 clients, but network.outside_clients_per_sink = true wires 0 mesh clients and one "
         "outside client per sink (2); allowed: 2")),
        ("clients = 2", "outside_clients_per_sink = true\noutside_clients = 1",
         "network.outside_clients: 1 with network.outside_clients_per_sink = true; allowed: 0 or 2 (one per sink)"),
        # One outside client serves the first sink only: sink 2 has nobody.
        ("clients = 1", "outside_clients = 1",
         ('network.nodes[2]: sink 2 has no client (no node with role "client" names it and network.outside_clients = 1 '
         "serves the first 1 of the sinks [1, 2]); allowed: a client for every sink (a client's `sink`, more "
         "network.outside_clients, or network.outside_clients_per_sink = true)")),
        ("clients = 1", 'lossy_links = [{a = 1, b = 2, loss = -0.1}]\noutside_clients = 2',
         "network.lossy_links[0].loss: -0.1 is out of range; expected a number >= 0 and <= 1"),
        ("clients = 1", "link_loss = 1.5\noutside_clients = 2",
         "network.link_loss: 1.5 is out of range; expected a number >= 0 and <= 1"),
        # η 6: SNR at 10 m = 0 − 55.4 − 60 + 105 = −10.4 dB, no frame gets through: no usable link.
        ("clients = 2", ('outside_clients_per_sink = true\nlink_loss_model = "shadowing"\nshadowing_sigma_db = 0.0\n'
         "path_loss_exponent = 6.0"),
         ('network.link_loss_model: "shadowing": node 1 has no path to the border router over links of ETX <= 10 '
         '(path ETX <= 100); allowed: a layout where every node has one, or "fixed"')),
    ],
)
def test_file_networks_of_sinks_refuse_bad_wiring(cli, tmp_path, workload, network, line):
    p = tmp_path / "bad.toml"
    p.write_text(f'[workload]\n{workload}\nexchanges = 2\n[network]\nkind = "file"\n{network}\n{_SINKS}')
    out = cli("run", p, "--no-db")
    assert out.returncode == 2
    assert out.stderr.strip() == f"coaplab: error: {line}"
    assert out.stdout == ""


def test_the_cocoa2016_flocklab_targets_wire_one_client_per_mote():
    for name in ("cocoa2016-flocklab-continuous", "cocoa2016-flocklab-burst"):
        configs = load(name).configurations()
        assert [c["coap"]["cc"] for c in configs] == ["default", "cocoa", "cocoa-s", "basic-rto", "linux-rto",
                                                       "peakhopper-rto"]
        c = configs[0]
        net, w, coap = c["network"], c["workload"], c["coap"]
        # 30 motes: the border router and 29 servers, one outside client each.
        assert len(net["nodes"]) == 30
        assert sum(n["role"] == "sink" for n in net["nodes"]) == 29
        assert net["outside_clients_per_sink"] and net["rdc"] == "contikimac"
        assert net["link_loss_model"] == "shadowing"
        assert net["mac"] == "contiki" and net["contiki_max_mac_transmissions"] == 5  # Contiki 2.6 on Sky
        clients = w["background"] + w["burst_clients"] if w["kind"] == "burst" else w["clients"]
        assert clients == 29
        # Californium's parameters.
        assert (coap["ack_timeout_s"], coap["ack_random_factor"], coap["max_retransmit"], coap["nstart"]) == (2.0, 1.5, 4, 1)
        assert c["replications"] == 15


def test_reproduce_prints_per_client_fairness_for_flocklab():
    from coaplab.suites.reproduce import outside_client_lines
    # The burst target, cut short: one replication, `default`, 2 burst requests per mote.
    c = load("cocoa2016-flocklab-burst").configurations()[0]
    c = {**c, "replications": 1, "workload": {**c["workload"], "duration_s": 20.0, "burst_at_s": 5.0,
                                              "burst_exchanges": 2}}
    res = coaplab.run(c, db=None)
    s = res.summaries[0]
    lines = outside_client_lines(s, res.runs[s["config_id"]])
    assert lines[1].startswith("  CoAP retransmissions per exchange (completed or failed) by hops: 1: ")
    assert lines[2].startswith("  completed per client (all replications): min ") and "Jain" in lines[2]
    assert lines[3].startswith("  burst: settling time ")
    assert " of 48 burst exchanges completed" in lines[3]  # 24 burst clients x 2
    # Not for other networks.
    star = coaplab.run({"name": "s", "workload": {"clients": 2, "exchanges": 2}}, db=None)
    assert outside_client_lines(star.summaries[0], star.runs[star.summaries[0]["config_id"]]) == []


# --------------------------------------------------------------------------- Contiki MAC profile

def test_contiki_keys_keep_other_configurations_identity():
    c = resolve({"workload": PERIODIC, "network": {"kind": "dumbbell", "mac": "contiki"}})
    assert c["network"] == {"kind": "dumbbell", "mac": "contiki"}


@pytest.mark.parametrize(
    "network, fragment",
    [
        ({"contiki_max_neighbor_queues": 0}, "network.contiki_max_neighbor_queues: 0 is out of range"),
        ({"contiki_max_mac_transmissions": 0}, "network.contiki_max_mac_transmissions: 0 is out of range"),
        ({"contiki_clock_second": 0}, "network.contiki_clock_second: 0 is out of range"),
        ({"contiki_processing_us": -1}, "network.contiki_processing_us: -1 is out of range"),
        ({"contiki_cpu_fixed_us": -1}, "network.contiki_cpu_fixed_us: -1 is out of range"),
        ({"contiki_cpu_time": "random"}, 'network.contiki_cpu_time: "random" is not allowed'),
        ({"contiki_rpl_etx": "yes"}, "network.contiki_rpl_etx"),
        ({"contiki_pending_packet": 1}, "network.contiki_pending_packet"),
        ({"contiki_clock_ticks": "on"}, "network.contiki_clock_ticks"),
        ({"mac": "csma"}, 'network.mac: "csma" is not allowed'),
    ],
)
def test_bad_contiki_keys(network, fragment):
    with pytest.raises(ScenarioError, match=None) as e:
        resolve({"workload": PERIODIC, "network": {"kind": "chain", "mac": "contiki", **network}})
    assert fragment in str(e.value)
    assert "\n" not in str(e.value)


@pytest.mark.parametrize(
    "network, request_bytes, fragment",
    [
        # 128 ticks / 200 Hz = 0 whole ticks: default_timebase() would be 0.
        ({"channel_check_rate_hz": 200}, 95, "network.channel_check_rate_hz: 200 gives a Contiki time base of 0 ticks"),
        # A 300-byte request on a middle hop: 2 + 1 + 8 + 8 (IPHC) + 7 (UDP) + 252 (CoAP) = 278 B
        # of 6LoWPAN > 104: FRAG1 4 + 26 + 72 = 102 B (72 = 120 − 48 B of the uncompressed
        # datagram, a multiple of 8), then FRAGNs of 96 B for 180 B: 3 fragments, plus the
        # temporary copy: 4 buffers.
        ({"mac_queue_frames": 3}, 300, "network.mac_queue_frames: 3 buffers cannot take one 300-byte request"),
        ({"border_router_queue_frames": 2}, 300, "network.border_router_queue_frames: 2 buffers"),
    ],
)
def test_contiki_engine_checks_exit_2(cli, tmp_path, network, request_bytes, fragment):
    p = tmp_path / "bad.toml"
    keys = "\n".join(f"{k} = {v}" for k, v in network.items())
    p.write_text(f'[workload]\nkind = "periodic"\nperiod_s = 2.0\nduration_s = 5.0\nrequest_bytes = {request_bytes}\n'
                 f'[network]\nkind = "chain"\nmac = "contiki"\n{keys}\n')
    out = cli("run", p, "--no-db")
    assert out.returncode == 2, out.stderr
    assert fragment in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1


def test_a_mesh_runs_one_client_per_client_node_by_default():
    # chain 20, grid 48, dumbbell 20 client nodes (docs/networks.md); a file mesh its
    # client-role nodes plus its outside clients; an explicit clients key wins.
    w = {k: v for k, v in PERIODIC.items() if k != "clients"}
    assert resolve({"workload": w, "network": {"kind": "grid"}})["workload"]["clients"] == 48
    assert resolve({"workload": w, "network": {"kind": "chain"}})["workload"]["clients"] == 20
    assert resolve({"workload": w, "network": {"kind": "dumbbell", "outside_clients": 2}})["workload"]["clients"] == 22
    nodes = [{"x": 0.0, "y": 0.0, "role": "border-router"}, {"x": 5.0, "y": 0.0, "role": "sink"},
             {"x": 10.0, "y": 0.0, "role": "client"}, {"x": 0.0, "y": 5.0, "role": "client"}]
    assert resolve({"workload": w, "network": {"kind": "file", "nodes": nodes}})["workload"]["clients"] == 2
    # Every mote a server, one outside client per sink (FlockLab as the CoCoA study wired it).
    servers = [nodes[0], nodes[1], {"x": 10.0, "y": 0.0, "role": "sink"}, {"x": 0.0, "y": 5.0, "role": "router"}]
    per_sink = {"kind": "file", "nodes": servers, "outside_clients_per_sink": True}
    assert resolve({"workload": w, "network": per_sink})["workload"]["clients"] == 2
    assert resolve({"workload": {**w, "clients": 3}, "network": {"kind": "grid"}})["workload"]["clients"] == 3
    assert resolve({"workload": w, "network": {"kind": "gprs"}})["workload"]["clients"] == 1
    assert resolve({"workload": w})["workload"]["clients"] == 1


def test_contiki_drop_causes_are_reported(tmp_path):
    r = coaplab.run({"name": "ck", "workload": {**PERIODIC, "period_s": 0.5},
                     "network": {"kind": "dumbbell", "mac": "contiki"}}, db=None)
    m = r.summaries[0]["mesh"]
    # Without autoack collided frames are lost, never retried: counted as collision drops.
    assert m["collision_drops"] > 0
    assert m["mac_queue_drops"] == m.get("neighbor_queue_drops", 0) + m.get("buffer_drops", 0)


@pytest.mark.parametrize("line", ["buffer_bytes = 100000", 'errors = "high"', "downlink_kbps = 10.0"])
def test_link_keys_a_gprs_network_ignores_are_refused(cli, tmp_path, line):
    # A GPRS network's buffers, rates and losses are network.gprs_* keys: a [link] key it
    # ignores is refused (one line naming the key, the value and what is allowed, nothing run),
    # never run and shown as if it applied.
    p = tmp_path / "gprs.toml"
    p.write_text(f'[network]\nkind = "gprs"\n[link]\n{line}\n')
    out = cli("run", p, "--no-db")
    assert out.returncode == 2
    key, value = (x.strip() for x in line.split("="))
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        f'coaplab: error: link.{key}: {value} does not apply to network.kind = "gprs"'), out.stderr
    assert lines[0].endswith("allowed in [link] with gprs: link_overhead_bytes, mtu")
    assert out.stdout == ""


def test_the_table_names_only_the_settings_a_network_uses():
    from coaplab.present.output import network_line

    # GPRS: its own buffers and loss (the defaults of docs/networks.md: an 8000 B modem buffer,
    # a 20000 B network buffer, 0.2 % loss), not the [link] buffer and errors.
    gprs = network_line(resolve({"network": {"kind": "gprs"}, "link": {"link_overhead_bytes": 4}}))
    assert gprs == "gprs: modem buffer 8,000 B, network buffer 20,000 B, loss 0.002"
    assert network_line(resolve({"network": {"kind": "chain"}})) == "network chain ([link] buffer and errors do not apply)"
    # The star: the [link] buffer (with a thousands separator, like every count) and errors.
    assert network_line(resolve({"link": {"buffer_bytes": 28200}})) == "buffer 28,200 B  errors none"


@pytest.mark.parametrize(
    "network, line",
    [
        ('kind = "chain"\ngprs_loss = 0.1',
         'network.gprs_loss: does not apply to network.kind = "chain"; keys of chain: range_m, interference_factor, '),
        ('kind = "gprs"\nrange_m = 20.0',
         'network.range_m: does not apply to network.kind = "gprs"; keys of gprs: gprs_uplink_kbps, '),
        ('kind = "grid"\nnodes = []', 'network.nodes: does not apply to network.kind = "grid"; keys of grid: range_m, '),
        ('mac_queue_frames = 8', 'network.mac_queue_frames: does not apply to network.kind = "star"; keys of star: none'),
    ],
)
def test_network_keys_of_another_kind_are_refused_in_one_line(cli, tmp_path, network, line):
    # Each network kind has its own keys (the schema's x-kinds): a key of another kind is
    # refused before anything runs, one line naming the key, the kind and the kind's keys.
    p = tmp_path / "n.toml"
    p.write_text(f"[network]\n{network}\n")
    out = cli("run", p, "--no-db")
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"coaplab: error: {line}"), out.stderr
    assert "Traceback" not in out.stderr and out.stdout == ""


def test_the_engine_refuses_network_keys_of_another_kind_with_the_same_line():
    import json

    from coaplab import _core

    with pytest.raises(ValueError) as e:
        _core.check(json.dumps({"network": {"kind": "chain", "gprs_loss": 0.1}}))
    with pytest.raises(ScenarioError) as p:
        resolve({"network": {"kind": "chain", "gprs_loss": 0.1}})
    assert str(p.value) in str(e.value)


def test_a_lossy_mesh_delivers_no_more_requests_than_its_clients_created():
    """Issue #38 item 15: on a lossy Contiki chain with a burst, retransmitted copies of a request
    counted as delivered requests (2,149 delivered of 1,500 created). By definition each request
    the clients create is delivered at most once, however many copies reach the sink, and the
    carried load cannot exceed the offered load; every copy still counts as a request packet."""
    workload = {"kind": "burst", "background": 0, "burst_at_s": 10, "burst_clients": 5,
                "burst_exchanges": 150, "duration_s": 60}
    res = coaplab.run({"name": "lossy", "replications": 2, "workload": workload,
                       "network": {"kind": "chain", "mac": "contiki", "link_loss": 0.05}}, db=None)
    m = res.summaries[0]["mesh"]
    # 2 replications × 5 burst clients × 150 exchanges = 1,500 requests created.
    assert m["requests_generated"] == 1500
    assert 0 < m["requests_delivered"] <= m["requests_generated"]
    assert 0 < m["carried_kbps"] <= m["offered_kbps"]
    # Frames are lost at 5 % per link over 4–10 hops: some requests are sent again and more
    # than one copy of some reaches the sink.
    assert m["request_packets_delivered"] > m["requests_delivered"]
