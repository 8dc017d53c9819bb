"""Emulation (docs/emulation.md): real stacks over the simulator's link model.

These tests need root (network namespaces, TUN devices) and skip with the reason otherwise;
scripts/test.sh (CI) runs as root. Each emulated run lasts a few seconds of real time.

The expected values are the simulator's (computed by the engine, which the emulation does not
use for its endpoints' timing): an emulated run of a replication sees the same link, the same
loss and path-delay draws and the same client start offsets, so with no loss its completion
times differ from the simulated ones only by real processing delays (tens of µs per packet).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from coaplab import emulate as em
from coaplab.cli import main

ROOT = Path(__file__).resolve().parent.parent


def _need_root():
    if os.geteuid() != 0:
        pytest.skip("emulation needs root (network namespaces, TUN devices); CI runs as root")
    if shutil.which("ip") is None or not os.path.exists("/dev/net/tun"):
        pytest.skip("emulation needs iproute2 and /dev/net/tun")
    try:
        em.binaries()
    except Exception as e:  # not built and no cargo
        pytest.skip(f"coaplab-emulator is not built: {e}")


def _ours() -> list[str]:
    """Namespaces this test process's emulations created and left behind."""
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return [line.split()[0] for line in out.splitlines() if line.startswith(f"coaplab-{os.getpid()}-")]


SMALL_UDP = {
    "name": "emu-test-udp", "seed": 1, "replications": 1,
    "link": {"buffer_bytes": 28200},
    "workload": {"kind": "continuous", "clients": 2, "exchanges": 3},
    "coap": {"cc": "cocoa"},
}

SMALL_FIRMWARE = {
    "name": "emu-test-firmware", "seed": 1, "replications": 1,
    "link": {"buffer_bytes": 28200},
    "workload": {"kind": "firmware", "clients": 1, "resource_bytes": 2048},
    "coap": {"cc": "default"},
}

SMALL_TCP = {
    "name": "emu-test-tcp", "seed": 1, "replications": 1,
    "link": {"buffer_bytes": 28200},
    "workload": {"kind": "firmware", "clients": 1, "resource_bytes": 10240},
    "coap": {"transport": "tcp", "cc": "newreno"},
}


def test_not_root_is_one_line_and_exit_2(monkeypatch, capsys):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    assert main(["emulate", str(ROOT / "examples" / "quick.toml"), "--no-db"]) == 2
    err = capsys.readouterr().err
    assert err.strip() == "coaplab: error: emulate: needs root (network namespaces and TUN devices); run as root or with sudo"


def test_missing_ip_is_one_line_and_exit_2(monkeypatch, capsys):
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    monkeypatch.setattr(shutil, "which", lambda name: None)
    assert main(["crossval", str(ROOT / "examples" / "quick.toml"), "--no-db"]) == 2
    assert "the 'ip' command (iproute2) is missing" in capsys.readouterr().err


def test_crossval_udp_coaplab_endpoints(tmp_path):
    """2 clients × 3 exchanges, no loss: the emulated run matches the simulated one. Tolerance:
    every FCT percentile within 1 % (an exchange is ~0.66 s; the measured difference is a few
    hundred µs per exchange: emulator lateness ~50 µs per packet plus the endpoints' socket
    paths); packet counts and the retransmission histogram equal."""
    _need_root()
    (sim, emu), = em.crossval(SMALL_UDP, progress=False, out_dir=tmp_path)
    for k, a in sim["fct_s"].items():
        assert emu["fct_s"][k] == pytest.approx(a, rel=0.01), k
    assert emu["exchanges_completed"] == sim["exchanges_completed"] == 6
    assert emu["retransmission_histogram"] == sim["retransmission_histogram"] == [6]
    assert emu["packets"]["sent"] == sim["packets"]["sent"] == 12
    assert _ours() == []
    run_dir = next(tmp_path.iterdir())
    for f in ("ingress.pcap", "egress.pcap", "packets.csv", "emulator.json", "clients.json"):
        assert (run_dir / f).stat().st_size > 0, f
    fates = (run_dir / "packets.csv").read_text().splitlines()[1:]
    assert len(fates) == 12 and all(",delivered," in line for line in fates)


def test_tcp_kernel_endpoints(tmp_path):
    """CoAP over the kernel's TCP (reno, SACK / timestamps / F-RTO / TLP / RACK off, MSS 256,
    initcwnd 4): a 10240-byte firmware fetch with a large buffer and no loss. Tolerance 5 % of
    the simulated FCT (Linux acknowledges in quick-ACK mode at the start of a connection, the
    model delays every second ACK; measured −2.3 %); no retransmission on either side."""
    _need_root()
    (sim, emu), = em.crossval(SMALL_TCP, progress=False, out_dir=tmp_path)
    assert emu["fct_s"]["p50"] == pytest.approx(sim["fct_s"]["p50"], rel=0.05)
    assert emu["exchanges_completed"] == 1
    assert emu["tcp"]["segments_retransmitted"] == sim["tcp"]["segments_retransmitted"] == 0
    assert emu["packets"]["dropped_buffer"] == 0
    assert _ours() == []


@pytest.mark.parametrize("client,server", [("libcoap", "coaplab"), ("aiocoap", "coaplab"), ("coaplab", "aiocoap"),
                                           ("aiocoap", "libcoap"), ("libcoap", "libcoap")])
def test_third_party_endpoints_block_wise(client, server, tmp_path):
    """A 2048-byte firmware resource in 8 blocks of 256 B with a third-party stack at one end
    or both: 8 requests cross the uplink, one per block (2048 / 256; no loss, so no
    retransmission) — a client that let the server choose would get libcoap's 1024-byte
    blocks and send 2. Tolerance 3 % of the simulated FCT (measured: libcoap +1.2 %, aiocoap
    +0.4 %, aiocoap server +0.2 %, aiocoap against libcoap +1.2 %, libcoap against libcoap
    +2.2 %; the stacks add their own processing per block, and their larger responses travel
    as two IP fragments). libcoap against libcoap gets 5 %: both ends' additions add up (the
    client's token — 7 bytes from the second block on — and libcoap's ETag and Size2 make a
    second fragment of 25 + 7 = 32 bytes, 32 × 8 / 30 kbit/s = 8.5 ms per block, 1.2 % of the
    0.713 s exchanges,
    and the measured time includes starting the coap-client process)."""
    _need_root()
    if "libcoap" in (client, server):
        _need_libcoap("client")
    if server == "libcoap":
        _need_libcoap("server")
    if "aiocoap" in (client, server):
        pytest.importorskip("aiocoap")
    (sim, emu), = em.crossval(SMALL_FIRMWARE, client=client, server=server, progress=False, out_dir=tmp_path)
    assert emu["exchanges_completed"] == sim["exchanges_completed"] == 8
    assert emu["exchanges_failed"] == 0
    assert emu["fct_s"]["p50"] == pytest.approx(sim["fct_s"]["p50"], rel=0.05 if client == server else 0.03)
    fates = (next(tmp_path.iterdir()) / "packets.csv").read_text().splitlines()[1:]
    assert sum(",up," in line for line in fates) == 8
    assert _ours() == []


def _need_libcoap(tool: str) -> None:
    if not any(shutil.which(n) for n in (f"coap-{tool}", f"coap-{tool}-notls")):
        if os.environ.get("CI"):
            pytest.fail("libcoap3-bin is required in CI (scripts/test.sh installs it as root)")
        pytest.skip(f"libcoap's coap-{tool} is not installed (apt-get install libcoap3-bin)")


@pytest.mark.parametrize("cc", ["default", "cocoa"])
def test_coaplab_client_against_libcoap_server(cc, tmp_path):
    """coaplab's client fetches the 2048-byte firmware resource (8 blocks of 256 B) from
    libcoap's coap-server, loaded with it by a PUT before the run.

    libcoap's block responses carry an ETag (1-byte value: 2 bytes) and Size2 (2048 = 0x800:
    3 bytes) that the simulator's do not: 4 + 2 + 3 (Block2) + 3 + 1 + 256 = 269 bytes of CoAP,
    297 of IP, above the 296-byte MTU, so each travels as two IP fragments (the first with
    296 − 20 = 276 → 272 bytes of data, a multiple of 8: 292 bytes, the simulator's response
    size; the second with 277 − 272 = 5 bytes + 20 of header). Packets sent: 8 requests +
    8 × 2 fragments = 24 (the simulator: 16). The second fragment's 25 bytes take
    25 × 8 / 30 kbit/s = 6.7 ms on the downlink per block, about 1 % of a ~0.713 s exchange
    (measured +1.0 %): tolerance 3 % of the simulated FCT, as for the other third-party
    endpoints."""
    _need_root()
    _need_libcoap("server")
    _need_libcoap("client")
    scenario = {**SMALL_FIRMWARE, "coap": {"cc": cc}}
    before = _libcoap_servers()
    (sim, emu), = em.crossval(scenario, server="libcoap", progress=False, out_dir=tmp_path)
    assert emu["exchanges_completed"] == sim["exchanges_completed"] == 8
    assert emu["exchanges_failed"] == 0
    assert emu["retransmission_histogram"] == sim["retransmission_histogram"] == [8]
    assert sim["packets"]["sent"] == 16
    assert emu["packets"]["sent"] == 24
    assert emu["fct_s"]["p50"] == pytest.approx(sim["fct_s"]["p50"], rel=0.03)
    assert _ours() == []
    assert (next(tmp_path.iterdir()) / "resource.bin").stat().st_size == 2048
    assert _libcoap_servers() - before == set(), "coap-server outlived the run"


def test_continuous_against_libcoap_server(tmp_path):
    """2 clients × 3 exchanges of the continuous workload against libcoap's server: its
    response to a plain GET of the 60-byte resource carries no option (no block, no
    Content-Format: the PUT gave none), so it is the simulator's size, 20 + 8 + 4 + 1 + 60 = 93
    bytes of IP, and the run matches the simulated one as coaplab's own server does (every FCT
    percentile within 1 %, the same packet count: 6 requests + 6 responses)."""
    _need_root()
    _need_libcoap("server")
    _need_libcoap("client")
    (sim, emu), = em.crossval(SMALL_UDP, server="libcoap", progress=False, out_dir=tmp_path)
    assert emu["exchanges_completed"] == sim["exchanges_completed"] == 6
    assert emu["packets"]["sent"] == sim["packets"]["sent"] == 12
    for k, a in sim["fct_s"].items():
        assert emu["fct_s"][k] == pytest.approx(a, rel=0.01), k
    sizes = [line.split(",")[2] for line in (next(tmp_path.iterdir()) / "packets.csv").read_text().splitlines()[1:]
             if ",down," in line]
    assert sizes == ["93"] * 6
    assert _ours() == []


def test_missing_coap_server_is_one_line_and_exit_2(tmp_path, monkeypatch, capsys):
    """--server libcoap without libcoap's coap-server installed: refused before anything is
    created."""
    _need_root()
    which = shutil.which
    monkeypatch.setattr(shutil, "which", lambda name: None if name.startswith("coap-server") else which(name))
    fw = tmp_path / "fw.toml"
    fw.write_text('[workload]\nkind = "firmware"\n')
    assert main(["emulate", str(fw), "--server", "libcoap", "--no-db"]) == 2
    assert capsys.readouterr().err.strip() == (
        "coaplab: error: emulate: libcoap's coap-server is missing; apt-get install libcoap3-bin")
    assert _ours() == []


def _libcoap_servers() -> set[int]:
    """PIDs of coap-server processes started the way coaplab starts them (or their `timeout`)."""
    found = set()
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                cmd = (d / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if any(b"coap-server" in a for a in cmd) and b"192.0.2.1" in cmd:
                found.add(int(d.name))
    return found


@pytest.mark.parametrize("server", ["coaplab", "libcoap"])
def test_sigint_to_the_command_removes_everything(server, tmp_path):
    """SIGINT while a run is under way: the command exits 130 and leaves no namespace, no
    interface and no process behind (libcoap's coap-server included)."""
    _need_root()
    if server == "libcoap":
        _need_libcoap("server")
        _need_libcoap("client")
    before = _libcoap_servers()
    scenario = tmp_path / "long.toml"
    scenario.write_text('name = "emu-sigint"\n[workload]\nkind = "continuous"\nclients = 3\nexchanges = 50\n')
    p = subprocess.Popen([sys.executable, "-m", "coaplab.cli", "emulate", str(scenario), "--no-db", "--no-progress",
                          "--server", server],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    prefix = f"coaplab-{p.pid}-"

    def namespaces() -> list[str]:
        out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
        return [line.split()[0] for line in out.splitlines() if line.startswith(prefix)]

    def processes() -> list[str]:
        found = []
        for d in Path("/proc").iterdir():
            if d.name.isdigit():
                try:
                    cmd = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                except OSError:
                    continue
                if prefix in cmd:
                    found.append(cmd)
        return found

    deadline = time.monotonic() + 20
    while len(namespaces()) < 2 and time.monotonic() < deadline and p.poll() is None:
        time.sleep(0.05)
    assert len(namespaces()) == 2, p.stderr.read() if p.poll() is not None else "namespaces never appeared"
    time.sleep(1.0)  # the emulator and endpoints are running now
    if server == "libcoap":
        while not _libcoap_servers() - before and time.monotonic() < deadline and p.poll() is None:
            time.sleep(0.05)
        assert _libcoap_servers() - before, "coap-server should be running in the server namespace"
    assert processes(), "the emulator should be running inside the run's namespaces"
    p.send_signal(signal.SIGINT)
    try:
        p.wait(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 130, p.stderr.read()
    assert namespaces() == []
    assert processes() == []
    assert _libcoap_servers() - before == set()
    host_links = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout
    assert em.TUN not in host_links


def test_emulate_command_stores_marked_runs(tmp_path):
    """`coaplab emulate --db`: the run is stored beside simulated ones, under its own
    configuration id, marked emulated with its endpoints and kernel."""
    _need_root()
    import json

    import duckdb

    scenario = tmp_path / "s.toml"
    scenario.write_text('name = "emu-db"\n[link]\nbuffer_bytes = 28200\n[workload]\nkind = "continuous"\n'
                        'clients = 1\nexchanges = 2\n')
    db = tmp_path / "r.duckdb"
    out = subprocess.run([sys.executable, "-m", "coaplab.cli", "emulate", str(scenario), "--db", str(db), "--format",
                          "json", "--no-progress"], capture_output=True, text=True, cwd=tmp_path)
    # Exit 1 would only say that the machine was too loaded for the run to be valid.
    assert out.returncode in (0, 1), out.stderr
    (summary,) = json.loads(out.stdout)
    assert (out.returncode == 1) == (summary["emulation"]["invalid_runs"] > 0)
    assert summary["exchanges_completed"] == 2 and summary["emulation"]["client"] == "coaplab"
    con = duckdb.connect(str(db), read_only=True)
    rows = con.execute("SELECT config_id, emulated, endpoint, kernel, status FROM runs").fetchall()
    assert rows == [(f"{summary['config_id']}-emu-coaplab-coaplab", True, "coaplab/coaplab", em.kernel(), "ok")]
    (n,) = con.execute("SELECT count(*) FROM clients").fetchone()
    assert n == 1


def test_stale_namespaces_of_dead_processes_are_removed():
    """A namespace named like ours whose process is gone (a SIGKILLed run) is removed at the
    next run's start; one of a live process is left alone."""
    _need_root()
    dead = subprocess.Popen(["true"])
    dead.wait()  # its pid is gone now (reaped)
    stale, alive = f"coaplab-{dead.pid}-abcdef-c", f"coaplab-{os.getppid()}-abcdef-s"
    for ns in (stale, alive):
        subprocess.run(["ip", "netns", "add", ns], check=True)
    try:
        removed = em.remove_stale_namespaces()
        listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
        assert stale in removed and stale not in listed
        assert alive in listed
    finally:
        for ns in (stale, alive):
            subprocess.run(["ip", "netns", "del", ns], stderr=subprocess.DEVNULL)


def test_link_errors_hit_the_same_packets_as_in_the_simulator(tmp_path):
    """The emulator's network is the simulator's, with the same RNG streams and the same time
    0 as the clients: with the `high` error profile (Gilbert–Elliott, 2 % / 80 % loss) the same
    packets are lost, so the losses, the retransmission histogram and the FCTs agree (3 clients
    × 4 exchanges, fasor-rc; tolerance 1 % on the FCT percentiles, as with no errors)."""
    _need_root()
    scenario = {
        "name": "emu-test-high", "seed": 3, "replications": 1,
        "link": {"buffer_bytes": 28200, "errors": "high"},
        "workload": {"kind": "continuous", "clients": 3, "exchanges": 4},
        "coap": {"cc": "fasor-rc", "max_retransmit": 20},
    }
    (sim, emu), = em.crossval(scenario, progress=False, out_dir=tmp_path)
    assert sim["packets"]["lost_link"] > 0, "the scenario should lose packets"
    assert emu["packets"]["lost_link"] == sim["packets"]["lost_link"]
    assert emu["retransmission_histogram"] == sim["retransmission_histogram"]
    for k, a in sim["fct_s"].items():
        assert emu["fct_s"][k] == pytest.approx(a, rel=0.01), k
    # Every lost packet is in dropped.pcap, and marked `link` in packets.csv.
    run_dir = next(tmp_path.iterdir())
    assert _pcap_count(run_dir / "dropped.pcap") == sim["packets"]["lost_link"]
    fates = [line.split(",")[4] for line in (run_dir / "packets.csv").read_text().splitlines()[1:]]
    assert fates.count("link") == sim["packets"]["lost_link"]


def _pcap_count(path: Path) -> int:
    """Records in a classic pcap file: 24-byte header, then 16-byte record headers whose third
    little-endian word is the captured length."""
    import struct

    data, off, n = path.read_bytes(), 24, 0
    while off + 16 <= len(data):
        off += 16 + struct.unpack_from("<I", data, off + 8)[0]
        n += 1
    return n


def test_unsupported_combinations_are_one_line_errors(tmp_path, capsys):
    _need_root()
    tcp = tmp_path / "tcp.toml"
    tcp.write_text('[workload]\nkind = "firmware"\n[coap]\ntransport = "tcp"\ncc = "newreno"\n')
    assert main(["emulate", str(tcp), "--client", "libcoap", "--no-db"]) == 2
    assert capsys.readouterr().err.strip() == ("coaplab: error: emulate: over TCP only coaplab's endpoints run so far "
                                               "(--client coaplab --server coaplab)")
    groups = tmp_path / "groups.toml"
    groups.write_text('[[group]]\nname = "a"\n[group.workload]\nclients = 1\n')
    assert main(["emulate", str(groups), "--no-db"]) == 2
    assert "client groups ([[group]]) are not supported" in capsys.readouterr().err
    assert main(["emulate", str(tcp), "--server", "libcoap", "--no-db"]) == 2
    assert capsys.readouterr().err.strip() == ("coaplab: error: emulate: over TCP only coaplab's endpoints run so far "
                                               "(--client coaplab --server coaplab)")
    fasor = tmp_path / "fasor.toml"
    fasor.write_text('[workload]\nkind = "firmware"\n[coap]\ncc = "fasor-rc"\n')
    assert main(["emulate", str(fasor), "--server", "libcoap", "--no-db"]) == 2
    assert capsys.readouterr().err.strip() == (
        "coaplab: error: coap.cc: 'fasor-rc' with --server libcoap is not emulated: only coaplab's server echoes "
        "FASOR's Rexmit-Cnt option; use --server coaplab or another algorithm")
    big = tmp_path / "big.toml"
    big.write_text('[workload]\nkind = "continuous"\nresponse_bytes = 2000\n')
    assert main(["emulate", str(big), "--server", "libcoap", "--no-db"]) == 2
    assert capsys.readouterr().err.strip() == (
        "coaplab: error: workload.response_bytes: 2000 with --server libcoap; allowed: at most 1024 "
        "(libcoap answers larger bodies block-wise)")
    assert _ours() == []
