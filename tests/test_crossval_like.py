"""Cross-validation of like with like (issue #37, items 2 and 5; docs/emulation.md): what each
third-party stack runs for each ``coap.cc`` (python/coaplab/stacks/thirdparty.py), a crossval
row refused where the two sides would run different algorithms (or, with ``--allow-mismatch``,
labelled), and the kernel's CUBIC beside Reno and BBR (per socket, as root).

The emulated runs need root (network namespaces, TUN devices) and skip otherwise, as in
tests/test_emulate.py; the refusals run before anything is created and need nothing."""

from __future__ import annotations

import pytest

from coaplab.cli import main
from coaplab.stacks import crossval as xv
from coaplab.stacks import namespaces as netns
from coaplab.stacks.thirdparty import CALIFORNIUM_CC, algorithm_mismatch, stack_algorithm
from conftest import need_emulation, our_namespaces


def test_what_each_stack_runs():
    # libcoap's coap-client and aiocoap implement RFC 7252's retransmission only.
    for stack in ("libcoap", "aiocoap"):
        for cc in ("default", "cocoa", "fasor", "linux-rto"):
            assert stack_algorithm(stack, cc) == "default"
    # coaplab's own clients run the engine's algorithm itself.
    assert stack_algorithm("coaplab", "cocoa") == "cocoa"
    # Californium runs its own code, which the simulator models as the …@californium names.
    assert stack_algorithm("californium", "default") == "default"
    assert stack_algorithm("californium", "cocoa") == "cocoa@californium"
    assert stack_algorithm("californium", "cocoa@californium") == "cocoa@californium"
    assert stack_algorithm("californium", "fasor") is None  # refused by californium_cc
    like = [cc for cc in CALIFORNIUM_CC if algorithm_mismatch("californium", cc) is None]
    assert like == ["default"] + [cc for cc in CALIFORNIUM_CC if cc.endswith("@californium")]
    assert algorithm_mismatch("libcoap", "default") is None
    assert algorithm_mismatch("libcoap", "cocoa") == "libcoap runs RFC 7252's fixed timers (default), the simulator runs cocoa"
    assert algorithm_mismatch("californium", "cocoa") == ("californium runs Californium's COCOA (cocoa@californium), "
                                                          "the simulator runs cocoa")


@pytest.mark.parametrize("client, cc, line", [
    ("libcoap", "cocoa", ("coap.cc = 'cocoa': libcoap runs RFC 7252's fixed timers (default), the simulator runs cocoa; "
                         "not like with like, nothing run (use --client coaplab or coap.cc = 'default'")),
    ("aiocoap", "linux-rto", ("coap.cc = 'linux-rto': aiocoap runs RFC 7252's fixed timers (default), the simulator runs "
                             "linux-rto; not like with like, nothing run (use --client coaplab or coap.cc = 'default'")),
    ("californium", "basic-rto", ("coap.cc = 'basic-rto': californium runs Californium's BASIC_RTO "
                                 "(basic-rto@californium), the simulator runs basic-rto; not like with like, nothing run "
                                 "(use --client coaplab or coap.cc = 'basic-rto@californium'")),
])
def test_a_mismatched_row_is_refused_before_anything_runs(tmp_path, capsys, client, cc, line):
    scenario = tmp_path / "emu.toml"
    scenario.write_text(f'name = "x"\n[workload]\nkind = "firmware"\nclients = 1\n[sweep]\n"coap.cc" = ["default", "{cc}"]\n')
    db = tmp_path / "x.duckdb"
    assert main(["crossval", str(scenario), "--client", client, "--db", str(db), "--no-progress"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"coaplab: error: crossval: {line}, or --allow-mismatch to run it labelled)"
    assert not db.exists() and our_namespaces() == []


def test_a_kernel_controller_other_than_the_models_is_refused(tmp_path, capsys):
    scenario = tmp_path / "tcp.toml"
    scenario.write_text('[workload]\nkind = "firmware"\nclients = 1\n[coap]\ntransport = "tcp"\ncc = "newreno"\n')
    assert main(["crossval", str(scenario), "--tcp-congestion", "cubic", "--no-db"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == ("coaplab: error: crossval: coap.cc = 'newreno': Linux runs cubic, the simulator runs newreno; "
                   "not like with like, nothing run (set coap.cc to the kernel's controller or drop --tcp-congestion, "
                   "or --allow-mismatch to run it labelled)")


def test_a_kernel_without_the_controller_is_one_line(monkeypatch):
    monkeypatch.setattr(netns, "kernel_congestion_list", lambda which: ["reno", "bbr"])
    with pytest.raises(Exception, match=r"^the kernel's TCP congestion control 'cubic': this kernel does not have it "
                                        r"\(tcp_available_congestion_control: reno bbr\); load it as root \(modprobe tcp_cubic\)"):
        netns.check_kernel_congestion("cubic")
    netns.check_kernel_congestion("bbr")


def test_the_namespace_default_names_only_what_the_host_allows(monkeypatch):
    cfg = {"coap": {"cc": "cubic", "transport": "tcp"}, "link": {"mtu": 296}, "tcp": {}}
    setup = netns.TcpSetup.from_config(cfg)
    monkeypatch.setattr(netns, "kernel_congestion_list", lambda which: ["reno", "bbr"])
    assert "net.ipv4.tcp_congestion_control" not in setup.sysctls()  # per route and per socket instead
    assert setup.route_options()[4:6] == ["congctl", "cubic"]
    monkeypatch.setattr(netns, "kernel_congestion_list", lambda which: ["reno", "bbr", "cubic"])
    assert setup.sysctls()["net.ipv4.tcp_congestion_control"] == "cubic"


def test_allow_mismatch_runs_and_labels_the_row(tmp_path, capsys):
    """aiocoap's client with coap.cc = cocoa, one 2048-byte firmware fetch: run, and its row says
    that aiocoap ran RFC 7252's fixed timers while the simulator ran CoCoA."""
    need_emulation()
    pytest.importorskip("aiocoap")
    scenario = tmp_path / "emu.toml"
    scenario.write_text('name = "mm"\nseed = 1\nreplications = 1\n[link]\nbuffer_bytes = 28200\n'
                        '[workload]\nkind = "firmware"\nclients = 1\nresource_bytes = 2048\n[coap]\ncc = "cocoa"\n')
    rc = main(["crossval", str(scenario), "--client", "aiocoap", "--allow-mismatch", "--no-db", "--no-progress"])
    out = capsys.readouterr().out
    assert rc in (0, 1), out
    head = out.splitlines()[0]
    assert head.endswith("NOT LIKE WITH LIKE: aiocoap runs RFC 7252's fixed timers (default), the simulator runs cocoa"), head
    assert our_namespaces() == []


SMALL_CUBIC = {
    "name": "emu-test-cubic", "seed": 1, "replications": 1,
    "link": {"buffer_bytes": 28200},
    "workload": {"kind": "firmware", "clients": 1, "resource_bytes": 10240},
    "coap": {"transport": "tcp", "cc": "cubic"},
}


def test_crossval_against_the_kernels_cubic(tmp_path):
    """The model's CUBIC against the kernel's, selected per socket (setsockopt TCP_CONGESTION,
    root) whatever the host allows unprivileged sockets: every server socket reports cubic
    (getsockopt), and a 10240-byte fetch with a large buffer and no loss takes the simulated time
    within 5 % (as Reno's in tests/test_emulate.py: slow start only, no loss), none retransmitted."""
    need_emulation()
    if "cubic" not in netns.kernel_congestion_list("available"):
        pytest.skip("this kernel has no cubic (tcp_available_congestion_control)")
    (sim, emu), = xv.crossval(SMALL_CUBIC, progress=False, out_dir=tmp_path, tcp_congestion="cubic")
    assert emu["emulation"]["tcp_congestion"] == "cubic"
    assert emu["emulation"]["tcp_congestion_sockets"] == ["cubic"]
    assert "algorithm_mismatch" not in emu["emulation"]
    assert emu["exchanges_completed"] == 1
    assert emu["fct_s"]["p50"] == pytest.approx(sim["fct_s"]["p50"], rel=0.05)
    assert emu["tcp"]["segments_retransmitted"] == sim["tcp"]["segments_retransmitted"] == 0
    assert our_namespaces() == []
