"""libcoap over DTLS 1.2 and libcoap's Observe over the emulated link, and FASOR's Rexmit-Cnt
against Californium's server (docs/emulation.md "DTLS", "Observe, libcoap", "FASOR's Rexmit-Cnt
and Californium"). Root only (network namespaces, TUN devices): skipped otherwise, as the other
emulation tests; every run is bounded by --max-seconds and leaves no namespace behind."""

from __future__ import annotations

import os
import shutil

import pytest

from coaplab.cli import main
from coaplab.stacks import crossval as xv
from coaplab.stacks import emulate as em
from conftest import need_emulation, our_namespaces

#: 2 clients × 2 exchanges on the reference star, no errors.
SMALL = {"name": "interop", "seed": 1, "replications": 1, "workload": {"kind": "continuous", "clients": 2, "exchanges": 2}}


def _need(binary: str) -> None:
    if shutil.which(binary) is None:
        if os.environ.get("CI"):
            pytest.fail(f"{binary} is required in CI (libcoap3-bin)")
        pytest.skip(f"{binary} is not installed (apt-get install libcoap3-bin)")


def test_libcoap_over_dtls_handshakes_and_exchanges(tmp_path):
    """libcoap's coap-client-openssl against coap-server-openssl with a PSK: one coap-client
    process per GET, so one full handshake per exchange — 2 × 2 = 4 handshakes (the simulator: one
    per client, 2). Each handshake is RFC 6347 §4.2.4's six flights with a cookie exchange
    (figure 1: ClientHello, HelloVerifyRequest, ClientHello, ServerHello…ServerHelloDone,
    ClientKeyExchange + ChangeCipherSpec + Finished, ChangeCipherSpec + Finished); libcoap and
    OpenSSL agree on an ECDHE-PSK suite (a ServerKeyExchange in the fourth flight). Every exchange
    is answered."""
    need_emulation()
    _need("coap-client-openssl")
    _need("coap-server-openssl")
    scenario = {**SMALL, "coap": {"cc": "default", "security": "dtls1.2"}}
    (sim, emu), = xv.crossval(scenario, client="libcoap", server="libcoap", progress=False, out_dir=tmp_path,
                              max_seconds=40)
    assert sim["security"]["handshakes"] == 2
    [d] = emu["emulation"]["dtls"]
    assert (d["handshakes"], d["exchanges"], d["answered"]) == (4, 4, 4)
    assert [f["from"] for f in d["flights"]] == ["client", "server"] * 3
    assert d["flights"][0]["messages"] == ["ClientHello"]
    assert d["flights"][1]["messages"] == ["HelloVerifyRequest"]
    assert "ServerKeyExchange" in d["flights"][3]["messages"]
    assert d["cipher_suite"] is not None and "PSK" in d["cipher_suite"]
    assert emu["exchanges_completed"] == 4
    rows = {r[0]: r for r in xv.crossval_rows(sim, emu)}
    assert rows["DTLS handshakes"][1:3] == (2, 4)
    assert our_namespaces() == []


def test_libcoap_observer_gets_non_and_con_notifications(tmp_path):
    """One libcoap observer of coap-server -N's /time for 10 s, no errors: a notification every
    second, NON with a CON after five NONs (libcoap 4.3.1 src/resource.c coap_notify_observers,
    COAP_OBS_MAX_NON = 5), so among the 8 or more notifications after the registration's ACK
    (10 s of once-per-second ticks, less the start and the last second) at least one is CON and
    at least five NON. Every notification is delivered but at most the last one, which may still
    be in flight (0.44 s on the downlink) when the observer stops; the client ACKs each CON."""
    need_emulation()
    _need("coap-client-notls")
    _need("coap-server-notls")
    scenario = {**SMALL, "workload": {"kind": "continuous", "clients": 1, "duration_s": 10.0}}
    [s] = em.emulate(scenario, client="libcoap", server="libcoap", tp_workload="observe", progress=False,
                     out_dir=tmp_path, max_seconds=30)
    [o] = s["emulation"]["observe"]
    assert o["observers"] == 1
    assert o["sent"] >= 9 and o["sent"] - 1 <= o["delivered"] <= o["sent"]
    assert o["sent_by_type"]["ACK"] == 1            # the registration's piggybacked response
    assert o["sent_by_type"]["NON"] >= 5 and o["sent_by_type"]["CON"] >= 1
    assert o["client_acks"] == o["delivered_by_type"]["CON"]
    assert our_namespaces() == []


@pytest.mark.parametrize("toml, args, message", [
    ('[coap]\nsecurity = "dtls1.2"\n', [],
     ("coaplab: error: coap.security: 'dtls1.2' with --client coaplab --server coaplab is not emulated; allowed: "
     "'dtls1.2' with --client libcoap --server libcoap (libcoap's OpenSSL build), or 'none'")),
    ('[coap]\nsecurity = "oscore"\n', ["--client", "libcoap", "--server", "libcoap"],
     "coap.security: 'oscore' with --client libcoap --server libcoap is not emulated"),
    ('[coap]\nsecurity = "dtls1.2"\ndtls_suite = "cert"\n', ["--client", "libcoap", "--server", "libcoap"],
     "allowed: dtls_suite = 'psk', dtls_connection_id = false"),
    ('[workload]\nduration_s = 5.0\n', ["--client", "libcoap", "--server", "libcoap", "--tp-workload", "q-block"],
     ("coaplab: error: --tp-workload: 'q-block' is not emulated: libcoap 4.3.1 (libcoap3-bin) has no Q-Block "
     "(RFC 9177 came with libcoap 4.3.2); allowed: observe")),
    ('[workload]\nduration_s = 5.0\n', ["--tp-workload", "observe"],
     "--tp-workload: 'observe' with --client coaplab --server coaplab; allowed: --client libcoap --server libcoap"),
    ('[workload]\nexchanges = 3\n', ["--client", "libcoap", "--server", "libcoap", "--tp-workload", "observe"],
     "observes for workload.duration_s seconds"),
    ('[coap]\ncc = "fasor-rc"\n', ["--server", "californium"],
     ("coaplab: error: coap.rexmit_cnt_option: 65000 with coap.cc = 'fasor-rc' and --server californium; allowed: "
     "65020 or 65028 (Californium's TransmissionCountOption, which counts transmissions from 1 in one byte)")),
])
def test_interop_refusals_are_one_line_exit_2(tmp_path, capsys, toml, args, message):
    need_emulation()
    scenario = tmp_path / "s.toml"
    scenario.write_text(toml)
    assert main(["emulate", str(scenario), *args, "--no-db"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and (err == message if message.startswith("coaplab:") else message in err), err
    assert our_namespaces() == []


def test_crossval_refuses_a_third_party_workload(tmp_path, capsys):
    scenario = tmp_path / "s.toml"
    scenario.write_text('[workload]\nduration_s = 5.0\n')
    assert main(["crossval", str(scenario), "--client", "libcoap", "--server", "libcoap", "--tp-workload", "observe",
                 "--no-db"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--tp-workload: 'observe' with crossval" in err, err


def test_fasor_rc_rexmit_cnt_echo_by_californiums_server(tmp_path):
    """coaplab's fasor-rc client against Californium's server (coaplab's driver with the
    maintainer's TransmissionCountOption definition, docs/emulation.md) under 0xfe04 = 65028: each
    request carries its transmission number, 1 for the first (the draft's count 0 + 1: the
    definition refuses 0), in one byte, and each response carries it back (TransmissionCountOption.
    transcribe). No errors: nothing is retransmitted, so every value is 0x01."""
    from coaplab.stacks import californium_setup, pcapcoap

    need_emulation()
    if shutil.which("java") is None or californium_setup.driver_dir() is None:
        if os.environ.get("CI"):
            pytest.fail("Californium's driver is required in CI (scripts/setup.sh builds it)")
        pytest.skip("Californium's driver is not built")
    scenario = {**SMALL, "link": {"buffer_bytes": 28200}, "coap": {"cc": "fasor-rc", "rexmit_cnt_option": 0xFE04}}
    (sim, emu), = xv.crossval(scenario, server="californium", progress=False, out_dir=tmp_path, max_seconds=40)
    assert emu["exchanges_completed"] == sim["exchanges_completed"] == 4
    assert emu["retransmission_histogram"] == [4]
    [run] = [p for p in tmp_path.iterdir() if p.is_dir()]
    requests, responses = [], []
    for _t, g in pcapcoap.datagrams(run / "egress.pcap"):
        m = pcapcoap.coap_message(g.payload)
        if m is not None:
            value = [v for n, v in m.options if n == 0xFE04]
            (requests if g.dport == 5683 else responses).append((m.code, value))
    assert requests == [(0x01, [b"\x01"])] * 4      # GET, transmission 1
    assert responses == [(0x45, [b"\x01"])] * 4     # 2.05 Content, echoed
    assert our_namespaces() == []
