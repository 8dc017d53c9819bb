"""Emulation (docs/emulation.md): real stacks over the simulator's link model.

These tests need root (network namespaces, TUN devices) and skip with the reason otherwise;
scripts/test.sh (CI) runs as root. Each emulated run lasts a few seconds of real time.

The expected values are the simulator's (computed by the engine, which the emulation does not
use for its endpoints' timing): an emulated run of a replication sees the same link, the same
loss and path-delay draws and the same client start offsets, so with no loss its completion
times differ from the simulated ones only by real processing delays (tens of µs per packet).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from coaplab.cli import main
from coaplab.stacks import crossval as xv
from coaplab.stacks import emulate as em
from coaplab.stacks import namespaces as netns
from conftest import need_emulation, our_namespaces

ROOT = Path(__file__).resolve().parent.parent




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
    every FCT percentile within 2 % (an exchange is ~0.66 s; the measured difference is a few
    hundred µs per exchange: emulator lateness ~50 µs per packet plus the endpoints' socket
    paths); packet counts and the retransmission histogram equal."""
    need_emulation()
    (sim, emu), = xv.crossval(SMALL_UDP, progress=False, out_dir=tmp_path)
    for k, a in sim["fct_s"].items():
        # 2 %: within 1 % on an idle machine; 1.1 % once while another build loaded both cores.
        assert emu["fct_s"][k] == pytest.approx(a, rel=0.02), k
    assert emu["exchanges_completed"] == sim["exchanges_completed"] == 6
    assert emu["retransmission_histogram"] == sim["retransmission_histogram"] == [6]
    assert emu["packets"]["sent"] == sim["packets"]["sent"] == 12
    assert our_namespaces() == []
    report = (tmp_path / "crossval.md").read_text()
    assert "| exchanges with 0 retransmissions | 6 | 6 | +0 |" in report and "| packets sent | 12 | 12 | +0 |" in report
    run_dir = _run_dir(tmp_path)
    for f in ("ingress.pcap", "egress.pcap", "packets.csv", "emulator.json", "clients.json"):
        assert (run_dir / f).stat().st_size > 0, f
    fates = (run_dir / "packets.csv").read_text().splitlines()[1:]
    assert len(fates) == 12 and all(",delivered," in line for line in fates)


def test_tcp_kernel_endpoints(tmp_path):
    """CoAP over the kernel's TCP (reno, SACK / timestamps / F-RTO / TLP / RACK off, MSS 256,
    initcwnd 4): a 10240-byte firmware fetch with a large buffer and no loss. Tolerance 5 % of
    the simulated FCT (Linux acknowledges in quick-ACK mode at the start of a connection, the
    model delays every second ACK; measured −2.3 %); no retransmission on either side."""
    need_emulation()
    (sim, emu), = xv.crossval(SMALL_TCP, progress=False, out_dir=tmp_path)
    assert emu["fct_s"]["p50"] == pytest.approx(sim["fct_s"]["p50"], rel=0.05)
    assert emu["exchanges_completed"] == 1
    assert emu["tcp"]["segments_retransmitted"] == sim["tcp"]["segments_retransmitted"] == 0
    assert emu["packets"]["dropped_buffer"] == 0
    assert our_namespaces() == []


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
    need_emulation()
    if "libcoap" in (client, server):
        _need_libcoap("client")
    if server == "libcoap":
        _need_libcoap("server")
    if "aiocoap" in (client, server):
        pytest.importorskip("aiocoap")
    (sim, emu), = xv.crossval(SMALL_FIRMWARE, client=client, server=server, progress=False, out_dir=tmp_path)
    assert emu["exchanges_completed"] == sim["exchanges_completed"] == 8
    assert emu["exchanges_failed"] == 0
    assert emu["fct_s"]["p50"] == pytest.approx(sim["fct_s"]["p50"], rel=0.05 if client == server else 0.03)
    fates = (_run_dir(tmp_path) / "packets.csv").read_text().splitlines()[1:]
    assert sum(",up," in line for line in fates) == 8
    assert our_namespaces() == []


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
    need_emulation()
    _need_libcoap("server")
    _need_libcoap("client")
    scenario = {**SMALL_FIRMWARE, "coap": {"cc": cc}}
    before = _libcoap_servers()
    (sim, emu), = xv.crossval(scenario, server="libcoap", progress=False, out_dir=tmp_path)
    assert emu["exchanges_completed"] == sim["exchanges_completed"] == 8
    assert emu["exchanges_failed"] == 0
    assert emu["retransmission_histogram"] == sim["retransmission_histogram"] == [8]
    assert sim["packets"]["sent"] == 16
    assert emu["packets"]["sent"] == 24
    assert emu["fct_s"]["p50"] == pytest.approx(sim["fct_s"]["p50"], rel=0.03)
    assert our_namespaces() == []
    assert (_run_dir(tmp_path) / "resource.bin").stat().st_size == 2048
    assert _libcoap_servers() - before == set(), "coap-server outlived the run"


def test_continuous_against_libcoap_server(tmp_path):
    """2 clients × 3 exchanges of the continuous workload against libcoap's server: its
    response to a plain GET of the 60-byte resource carries no option (no block, no
    Content-Format: the PUT gave none), so it is the simulator's size, 20 + 8 + 4 + 1 + 60 = 93
    bytes of IP, and the run matches the simulated one as coaplab's own server does (every FCT
    percentile within 1 %, the same packet count: 6 requests + 6 responses)."""
    need_emulation()
    _need_libcoap("server")
    _need_libcoap("client")
    (sim, emu), = xv.crossval(SMALL_UDP, server="libcoap", progress=False, out_dir=tmp_path)
    assert emu["exchanges_completed"] == sim["exchanges_completed"] == 6
    assert emu["packets"]["sent"] == sim["packets"]["sent"] == 12
    for k, a in sim["fct_s"].items():
        # 2 %: within 1 % on an idle machine; 1.1 % once while another build loaded both cores.
        assert emu["fct_s"][k] == pytest.approx(a, rel=0.02), k
    sizes = [line.split(",")[2] for line in (_run_dir(tmp_path) / "packets.csv").read_text().splitlines()[1:]
             if ",down," in line]
    assert sizes == ["93"] * 6
    assert our_namespaces() == []


def test_missing_coap_server_is_one_line_and_exit_2(tmp_path, monkeypatch, capsys):
    """--server libcoap without libcoap's coap-server installed: refused before anything is
    created."""
    need_emulation()
    which = shutil.which
    monkeypatch.setattr(shutil, "which", lambda name: None if name.startswith("coap-server") else which(name))
    fw = tmp_path / "fw.toml"
    fw.write_text('[workload]\nkind = "firmware"\n')
    assert main(["emulate", str(fw), "--server", "libcoap", "--no-db"]) == 2
    assert capsys.readouterr().err.strip() == (
        "coaplab: error: emulate: libcoap's coap-server is missing; apt-get install libcoap3-bin")
    assert our_namespaces() == []


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


def _start_long_emulation(server, tmp_path):
    """`coaplab emulate` of a long run, once its namespaces exist and its processes run;
    returns (process, namespaces(), processes()) — the latter two list what it created."""
    scenario = tmp_path / "long.toml"
    scenario.write_text('name = "emu-signal"\n[workload]\nkind = "continuous"\nclients = 3\nexchanges = 50\n')
    p = subprocess.Popen([sys.executable, "-m", "coaplab.cli", "emulate", str(scenario), "--no-db", "--no-progress",
                          "--server", server],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    prefix = f"coaplab-{p.pid}-"

    def namespaces() -> list[str]:
        out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=False).stdout
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
    return p, namespaces, processes


@pytest.mark.parametrize("server, sig", [("coaplab", signal.SIGINT), ("libcoap", signal.SIGINT),
                                         ("coaplab", signal.SIGHUP), ("coaplab", signal.SIGTERM)])
def test_a_signal_to_the_command_removes_everything(server, sig, tmp_path):
    """SIGINT (Ctrl-C), SIGHUP (a closed terminal) or SIGTERM while a run is under way: the
    command exits 128 + signal and leaves no namespace, no interface and no process behind
    (libcoap's coap-server included)."""
    need_emulation()
    if server == "libcoap":
        _need_libcoap("server")
        _need_libcoap("client")
    before = _libcoap_servers()
    p, namespaces, processes = _start_long_emulation(server, tmp_path)
    if server == "libcoap":
        deadline = time.monotonic() + 20
        while not _libcoap_servers() - before and time.monotonic() < deadline and p.poll() is None:
            time.sleep(0.05)
        assert _libcoap_servers() - before, "coap-server should be running in the server namespace"
    assert processes(), "the emulator should be running inside the run's namespaces"
    p.send_signal(sig)
    try:
        p.wait(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 128 + sig, p.stderr.read()
    assert namespaces() == []
    assert processes() == []
    assert _libcoap_servers() - before == set()
    host_links = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True, check=False).stdout
    assert netns.TUN not in host_links


def _descendants(pid: int) -> set[int]:
    """Every process below `pid` (children, their children, ...)."""
    parents: dict[int, int] = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                parents[int(d.name)] = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                pass
    out, frontier = set(), {pid}
    while frontier:
        frontier = {c for c, p in parents.items() if p in frontier} - out
        out |= frontier
    return out


def _alive(pids: set[int]) -> set[int]:
    out = set()
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z":
            out.add(pid)
    return out


def test_after_a_sigkill_the_emulator_and_endpoints_end_too(tmp_path):
    """SIGKILL runs no clean-up in the command, but its children are tied to it
    (PR_SET_PDEATHSIG): the emulator, server and clients end within seconds instead of running
    on for up to --max-seconds. The namespaces stay until the next run removes them."""
    need_emulation()
    p, namespaces, _processes = _start_long_emulation("coaplab", tmp_path)
    children = _descendants(p.pid)
    left = namespaces()
    work = set()  # the run's temporary directory, which a SIGKILL leaves behind
    for pid in children:
        try:
            args = Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")
        except OSError:
            continue
        for a in args:  # e.g. --config <tmp>/coaplab-emulate-XXXX/config.json, --out <tmp>/coaplab-emulate-XXXX
            for d in (Path(a), *Path(a).parents):
                if d.parent == Path(tempfile.gettempdir()) and d.name.startswith("coaplab-emulate-"):
                    work.add(d)
    try:
        assert len(children) >= 3, "the emulator, the server and the clients should be running"
        p.kill()
        p.wait(timeout=10)
        deadline = time.monotonic() + 5
        while _alive(children) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _alive(children) == set()
    finally:
        for pid in _alive(children):  # never leave a process of this run behind, even on failure
            os.kill(pid, signal.SIGKILL)
        for ns in left:  # what the next run's remove_stale_namespaces() does
            subprocess.run(["ip", "netns", "del", ns], stderr=subprocess.DEVNULL, check=False)
        for d in work:  # only <tmp>/coaplab-emulate-XXXX directories, never a parent
            assert d.parent == Path(tempfile.gettempdir()) and d.name.startswith("coaplab-emulate-"), d
            shutil.rmtree(d, ignore_errors=True)
    assert namespaces() == []


def test_emulate_command_stores_marked_runs(tmp_path):
    """`coaplab emulate --db`: the run is stored beside simulated ones, under its own
    configuration id, marked emulated with its endpoints and kernel."""
    need_emulation()
    import json

    import duckdb

    scenario = tmp_path / "s.toml"
    scenario.write_text('name = "emu-db"\n[link]\nbuffer_bytes = 28200\n[workload]\nkind = "continuous"\n'
                        'clients = 1\nexchanges = 2\n')
    db = tmp_path / "r.duckdb"
    out = subprocess.run([sys.executable, "-m", "coaplab.cli", "emulate", str(scenario), "--db", str(db), "--format",
                          "json", "--no-progress"], capture_output=True, text=True, cwd=tmp_path, check=False)
    # Exit 1 would only say that the machine was too loaded for the run to be valid.
    assert out.returncode in (0, 1), out.stderr
    (summary,) = json.loads(out.stdout)
    assert (out.returncode == 1) == (summary["emulation"]["invalid_runs"] > 0)
    assert summary["exchanges_completed"] == 2 and summary["emulation"]["client"] == "coaplab"
    con = duckdb.connect(str(db), read_only=True)
    rows = con.execute("SELECT config_id, emulated, endpoint, kernel, status FROM runs").fetchall()
    assert rows == [(f"{summary['config_id']}-emu-coaplab-coaplab", True, "coaplab/coaplab", netns.kernel(), "ok")]
    (n,) = con.execute("SELECT count(*) FROM clients").fetchone()
    assert n == 1


def test_stale_namespaces_of_dead_processes_are_removed():
    """A namespace named like ours whose process is gone (a SIGKILLed run) is removed at the
    next run's start; one of a live process is left alone."""
    need_emulation()
    dead = subprocess.Popen(["true"])
    dead.wait()  # its pid is gone now (reaped)
    stale, alive = f"coaplab-{dead.pid}-abcdef-c", f"coaplab-{os.getppid()}-abcdef-s"
    for ns in (stale, alive):
        subprocess.run(["ip", "netns", "add", ns], check=True)
    try:
        removed = netns.remove_stale_namespaces()
        listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=False).stdout
        assert stale in removed and stale not in listed
        assert alive in listed
    finally:
        for ns in (stale, alive):
            subprocess.run(["ip", "netns", "del", ns], stderr=subprocess.DEVNULL, check=False)


def test_link_errors_hit_the_same_packets_as_in_the_simulator(tmp_path):
    """The emulator's network is the simulator's, with the same RNG streams and the same time
    0 as the clients: with the `high` error profile (Gilbert–Elliott, 2 % / 80 % loss) the same
    packets are lost, so the losses, the retransmission histogram and the FCTs agree (3 clients
    × 4 exchanges, fasor-rc; tolerance 1 % on the FCT percentiles, as with no errors)."""
    need_emulation()
    scenario = {
        "name": "emu-test-high", "seed": 3, "replications": 1,
        "link": {"buffer_bytes": 28200, "errors": "high"},
        "workload": {"kind": "continuous", "clients": 3, "exchanges": 4},
        "coap": {"cc": "fasor-rc", "max_retransmit": 20},
    }
    (sim, emu), = xv.crossval(scenario, progress=False, out_dir=tmp_path)
    assert sim["packets"]["lost_link"] > 0, "the scenario should lose packets"
    assert emu["packets"]["lost_link"] == sim["packets"]["lost_link"]
    assert emu["retransmission_histogram"] == sim["retransmission_histogram"]
    for k, a in sim["fct_s"].items():
        # 2 %: within 1 % on an idle machine; 1.1 % once while another build loaded both cores.
        assert emu["fct_s"][k] == pytest.approx(a, rel=0.02), k
    # Every lost packet is in dropped.pcap, and marked `link` in packets.csv.
    run_dir = _run_dir(tmp_path)
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


_TCP_ONLY_OURS = ("coaplab: error: emulate: over TCP only coaplab's endpoints run so far "
                  "(--client coaplab --server coaplab)")


@pytest.mark.parametrize("toml, args, message", [
    ('[workload]\nkind = "firmware"\n[coap]\ntransport = "tcp"\ncc = "newreno"\n', ["--client", "libcoap"],
     _TCP_ONLY_OURS),
    ('[workload]\nkind = "firmware"\n[coap]\ntransport = "tcp"\ncc = "newreno"\n', ["--server", "libcoap"],
     _TCP_ONLY_OURS),
    ('[[group]]\nname = "a"\n[group.workload]\nclients = 1\n', [], "client groups ([[group]]) are not supported"),
    ('[workload]\nkind = "firmware"\n[coap]\ncc = "fasor-rc"\n', ["--server", "libcoap"],
     ("coaplab: error: coap.cc: 'fasor-rc' with --server libcoap is not emulated: its server does not echo "
     "FASOR's Rexmit-Cnt option; use --server coaplab or californium, or another algorithm")),
    ('[workload]\nkind = "continuous"\nresponse_bytes = 2000\n', ["--server", "libcoap"],
     ("coaplab: error: workload.response_bytes: 2000 with --server libcoap; allowed: at most 1024 "
     "(libcoap answers larger bodies block-wise)")),
])
def test_unsupported_combinations_are_one_line_errors(tmp_path, capsys, toml, args, message):
    """Refused before anything is created: exit 2, one line (the whole line where it is fixed)."""
    need_emulation()
    scenario = tmp_path / "s.toml"
    scenario.write_text(toml)
    assert main(["emulate", str(scenario), *args, "--no-db"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and (err == message if message.startswith("coaplab:") else message in err)
    assert our_namespaces() == []


# ------------------------------------------------------------------ time-sequence graphs from the captures

T0 = 1_700_000_000_000_000_000  # the run's time 0 on the wall clock (emulator.json wall_start_ns), ns
CLIENT, SERVER, PORT = "10.0.0.1", "192.0.2.1", 5683
ISN = 4294967000  # the server's ISN, 296 below 2^32: its data wraps around (RFC 9293 §3.4)


def _ip(a: str) -> bytes:
    return bytes(int(x) for x in a.split("."))


def _tcp(src: str, dst: str, sport: int, dport: int, seq: int, ack: int, flags: int, payload: int = 0,
         proto: int = 6) -> bytes:
    """A raw IPv4 packet (20-byte header) carrying a 20-byte TCP header and `payload` zero bytes."""
    import struct

    tcp = struct.pack("!HHIIBBHHH", sport, dport, seq % 2**32, ack % 2**32, 5 << 4, flags, 65535, 0, 0)
    body = tcp + bytes(payload)
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(body), 0, 0x4000, 64, proto, 0, _ip(src), _ip(dst))
    return ip + body


def _pcap(path: Path, records: list[tuple[float, bytes]], magic: int = 0xA1B23C4D, endian: str = "<") -> None:
    """A classic pcap file, raw IP (link type 101); timestamps `T0 + t` s (ns, or µs with the
    microsecond magic)."""
    import struct

    out = struct.pack(endian + "IHHiIII", magic, 2, 4, 0, 0, 65535, 101)
    for t, pkt in records:
        ns = T0 + round(t * 1e9)
        frac = ns % 10**9 if magic == 0xA1B23C4D else (ns % 10**9) // 1000
        out += struct.pack(endian + "IIII", ns // 10**9, frac, len(pkt), len(pkt)) + pkt
    path.write_bytes(out)


@pytest.mark.parametrize("tcp, quickack", [
    ({}, False),                                   # the model's delayed ACK: the kernel's own policy
    ({"delayed_ack_ms": 0}, True),
    ({"ack_every_segment": True}, True),           # route quickack 1 = an ACK for every segment
    ({"ack_every_segment": False, "delayed_ack_ms": 200}, False),
])
def test_the_model_ack_rule_maps_to_route_quickack(tcp, quickack):
    cfg = {"coap": {"cc": "bbr", "transport": "tcp"}, "link": {"mtu": 296}, "tcp": tcp}
    setup = netns.TcpSetup.from_config(cfg)
    opts = setup.route_options()
    assert opts[:6] == ["initcwnd", "4", "advmss", "256", "congctl", "bbr"]
    assert (opts[6:] == ["quickack", "1"]) is quickack, opts
    assert setup.like_for_like() is quickack
    assert ("(like for like)" if quickack else "(not like for like)") in xv._ack_rule(cfg)


def test_pcap_reader_microsecond_and_big_endian(tmp_path):
    from coaplab.stacks.pcapseq import read_pcap

    pkt = _tcp(CLIENT, SERVER, 1, 2, 0, 0, 0x02)
    _pcap(tmp_path / "us.pcap", [(0.000005, pkt)], magic=0xA1B2C3D4, endian=">")
    # T0 + 5 µs: seconds T0 / 1e9, fraction 5 (µs) → 5000 ns.
    assert list(read_pcap(tmp_path / "us.pcap")) == [(T0 + 5000, pkt)]
    (tmp_path / "bad.pcap").write_bytes(bytes(24))
    with pytest.raises(em.CoaplabError, match="not a pcap file"):
        list(read_pcap(tmp_path / "bad.pcap"))


def test_time_sequence_points_from_a_hand_made_capture(tmp_path):
    """Connection 0 of 10.0.0.1 (port 40000): the server sends 256 + 256 + 100 bytes from ISN + 1,
    its second segment is dropped and retransmitted; the client's ACKs reach the server. A second
    connection (port 40001) and a UDP packet are ignored. Expected points by hand: relative seq
    = seq − (ISN + 1) mod 2^32, so ISN + 1 → 0, ISN + 257 → 256, ISN + 513 = 2^32 + 217 → 512."""
    from coaplab.stacks.pcapseq import time_sequence_points

    SYN, ACK, PSH = 0x02, 0x10, 0x08
    c, s = (CLIENT, SERVER, 40000, PORT), (SERVER, CLIENT, PORT, 40000)
    other = (SERVER, CLIENT, PORT, 40001)
    ingress = [
        (0.10, _tcp(*c, 500, 0, SYN)),
        (0.20, _tcp(*s, ISN, 501, SYN | ACK)),
        (0.30, _tcp(*c, 501, ISN + 1, ACK)),
        (0.35, _tcp(*c, 501, ISN + 1, ACK | PSH, 10)),
        (0.40, _tcp(*s, ISN + 1, 511, ACK | PSH, 256)),
        (0.41, _tcp(*s, ISN + 257, 511, ACK | PSH, 256)),
        (0.42, _tcp(*s, ISN + 513, 511, ACK | PSH, 100)),
        (0.60, _tcp(CLIENT, SERVER, 40001, PORT, 900, 0, SYN)),
        (0.61, _tcp(*other, 7000, 901, SYN | ACK)),
        (0.62, _tcp(*other, 7001, 901, ACK, 256)),
        (0.70, _tcp(*s, ISN + 1, 511, 0, 256, proto=17)),  # not TCP
        (0.90, _tcp(*s, ISN + 257, 511, ACK | PSH, 256)),
    ]
    dropped = [(0.45, _tcp(*s, ISN + 257, 511, ACK | PSH, 256))]
    egress = [
        (0.31, _tcp(*c, 501, ISN + 1, ACK)),  # completes the handshake: no point
        (0.36, _tcp(*c, 501, ISN + 1, ACK | PSH, 10)),
        (0.50, _tcp(*c, 511, ISN + 257, ACK)),
        (0.55, _tcp(*c, 511, ISN + 257, ACK)),  # duplicate ACK (the second segment was lost)
        (0.62, _tcp(*s, ISN + 1, 511, ACK, 256)),  # server → client: not an ACK to the server
        (0.95, _tcp(*c, 511, ISN + 613, ACK)),  # 612 = 256 + 256 + 100
    ]
    _pcap(tmp_path / "ingress.pcap", ingress)
    _pcap(tmp_path / "dropped.pcap", dropped)
    _pcap(tmp_path / "egress.pcap", egress)
    (tmp_path / "emulator.json").write_text(f'{{"wall_start_ns": {T0}}}')
    expected = [
        (0.40, "send", 0, 256), (0.41, "send", 256, 256), (0.42, "send", 512, 100), (0.90, "retransmit", 256, 256),
        (0.45, "drop", 256, 256),
        (0.36, "ack", 0, 0), (0.50, "ack", 256, 0), (0.55, "ack", 256, 0), (0.95, "ack", 612, 0),
    ]
    got = [(p["time_s"], p["event"], p["seq"], p["length"]) for p in time_sequence_points(tmp_path, CLIENT)]
    assert [g[1:] for g in got] == [e[1:] for e in expected]
    assert [g[0] for g in got] == pytest.approx([e[0] for e in expected], abs=1e-9)
    # The second connection: one segment from its ISN + 1, no ACKs captured.
    assert [(p["event"], p["seq"], p["length"]) for p in time_sequence_points(tmp_path, CLIENT, 1)] == [("send", 0, 256)]
    with pytest.raises(em.CoaplabError, match="opened 2 TCP connections; there is no connection 2"):
        time_sequence_points(tmp_path, CLIENT, 2)


def test_time_sequence_overlay_draws_both_series():
    from coaplab.present.traces import time_sequence_overlay

    sim = [{"time_s": 0.1, "event": "send", "seq": 0, "length": 256}, {"time_s": 0.2, "event": "drop", "seq": 256, "length": 256},
           {"time_s": 0.3, "event": "ack", "seq": 256, "length": 0}, {"time_s": 0.5, "event": "retransmit", "seq": 256, "length": 256}]
    emu = [{"time_s": 0.11, "event": "send", "seq": 0, "length": 256}, {"time_s": 0.31, "event": "ack", "seq": 256, "length": 0}]
    fig = time_sequence_overlay(sim, emu, "test")
    ax = fig.axes[0]
    gids = sorted(a.get_gid() for a in ax.get_children() if a.get_gid())
    assert gids == ["emulated-ack", "emulated-send", "simulated-ack", "simulated-drop", "simulated-retransmit",
                    "simulated-send"]
    texts = [t.get_text() for t in fig.legends[0].get_texts()]
    assert texts == ["simulated: 1 sent, 1 retransmitted, 1 dropped", "emulated (Linux): 1 sent, 0 retransmitted, 0 dropped"]
    assert 'id="emulated-send"' in fig.to_svg() and 'id="simulated-send"' in fig.to_svg()


def test_crossval_tcp_writes_the_overlaid_time_sequence_graphs(tmp_path):
    """`crossval --out` on a TCP scenario (kernel Reno, infinite buffer, no loss, a 10240-byte
    resource, 1 replication) writes the SVG overlaying replication 0's simulated and emulated
    graphs. Both sides send the same data segments (tolerance 0: no loss, MSS 256 on both): the
    server's CSM (RFC 8323 §5.3, 7 bytes, one segment), then the response of 10240 + 5 bytes
    (Len/TKL, 2-byte extended length for 269 ≤ length < 65805, code, payload marker; no token)
    = 10245 bytes = 40 × 256 + 5 → 41 segments; 42 in all, none retransmitted."""
    need_emulation()
    from coaplab.describe.scenario import config_id, load_scenario
    from coaplab.stacks.crossval import simulated_time_sequence
    from coaplab.stacks.pcapseq import time_sequence_points

    scenario = dict(SMALL_TCP, name="emu-test-tcp-seq", link={"buffer_bytes": 1410000})
    rc = main(["crossval", "--no-db", "--no-progress", "--out", str(tmp_path), "--format", "table",
               _write_toml(tmp_path / "s.toml", scenario)])
    # Exit 1 would only say that the shared machine was too loaded for the run to count as
    # valid (delivery lateness p99 over 1 ms: with ~80 packets, one late packet).
    assert rc == 0 or (rc == 1 and "1 of 1 emulated runs invalid" in (tmp_path / "crossval.md").read_text())
    cfg = next(iter(load_scenario(scenario).configurations()))
    cid = config_id(cfg)
    svg = tmp_path / f"emu-test-tcp-seq-{cid}-rep0-time-sequence.svg"
    text = svg.read_text()
    for gid in ("simulated-send", "simulated-ack", "emulated-send", "emulated-ack"):
        assert f'id="{gid}"' in text, gid
    assert "emulated (Linux)" in text
    report = (tmp_path / "crossval.md").read_text()
    assert f"## emu-test-tcp-seq `{cid}`" in report and f"]({svg.name})" in report
    assert "| TCP segments retransmitted | 0 | 0 | +0 |" in report and "| FCT p50 s |" in report
    assert "ACK rule: the model delays ACKs, the kernel follows its own policy (not like for like)." in report
    emu = time_sequence_points(tmp_path / f"{cid}-r0", netns.client_address(0))
    sim = simulated_time_sequence(cfg)
    for side, pts in (("simulated", sim), ("emulated", emu)):
        data = sorted((p["seq"], p["length"]) for p in pts if p["event"] == "send")
        # On failure, say what the run did (the emulated one runs on the wall clock of a shared machine).
        assert len(data) == 42 and data[0] == (0, 7) and data[-1] == (7 + 40 * 256, 5), (side, data)
        assert [p for p in pts if p["event"] in ("retransmit", "drop")] == [], (side, report)
    assert our_namespaces() == []


def _run_dir(out: Path) -> Path:
    """The one run directory `--out` holds (beside crossval.md and the graphs)."""
    dirs = [p for p in out.iterdir() if p.is_dir()]
    assert len(dirs) == 1, dirs
    return dirs[0]


def _write_toml(path: Path, scenario: dict) -> str:
    """A scenario dict as a TOML file (flat sections only)."""
    def value(v):
        return f'"{v}"' if isinstance(v, str) else str(v).lower() if isinstance(v, bool) else f"{v!r}"

    lines = [f"{k} = {value(v)}" for k, v in scenario.items() if not isinstance(v, dict)]
    for sec, kv in scenario.items():
        if isinstance(kv, dict):
            lines.append(f"[{sec}]")
            lines += [f"{k} = {value(v)}" for k, v in kv.items()]
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def test_crossval_into_a_database_puts_the_overlay_in_the_report(tmp_path, capsys):
    """`crossval --db` of a traced TCP scenario stores the emulated run's time-sequence trace
    (client 0's first connection, read from the captures, which then go) beside the simulated
    runs, and `coaplab report` draws the two on one axis in the emulated configuration's
    figure: the same 42 data segments as in the test above (7-byte CSM + 40 × 256 + 5)."""
    need_emulation()
    import glob
    import tempfile

    from coaplab.describe.scenario import config_id, load_scenario
    from coaplab.execute.tidy import load

    before = set(glob.glob(os.path.join(tempfile.gettempdir(), "coaplab-emulate-*")))
    scenario = dict(SMALL_TCP, name="emu-test-tcp-report", trace=True, link={"buffer_bytes": 1410000})
    db = tmp_path / "r.duckdb"
    rc = main(["crossval", "--db", str(db), "--no-progress", "--format", "json",
               _write_toml(tmp_path / "s.toml", scenario)])
    (pair,) = json.loads(capsys.readouterr().out)
    # Exit 1 would only say that the shared machine was too loaded for the run to be valid.
    assert rc == 0 or (rc == 1 and pair["emulated"]["emulation"]["invalid_runs"] == 1)
    assert set(glob.glob(os.path.join(tempfile.gettempdir(), "coaplab-emulate-*"))) == before
    cid = config_id(next(iter(load_scenario(scenario).configurations())))
    study = load(db)
    emu_cid = em.emulation_id(cid, "coaplab", "coaplab")
    (emu_run,) = study.runs[emu_cid]
    (trace,) = emu_run["seq_traces"]
    sends = sorted((p[3], p[4]) for p in trace["points"] if p[2] == "send")
    assert len(sends) == 42 and sends[0] == (0, 7) and sends[-1] == (7 + 40 * 256, 5)
    assert main(["report", "--db", str(db), "--out", str(tmp_path / "rep")]) == 0
    html = (tmp_path / "rep" / "index.html").read_text()
    assert html.count('id="emulated-send"') == 1 and html.count('id="simulated-send"') == 1
    assert f"simulated (configuration {cid})" in html
    assert our_namespaces() == []


def test_a_run_without_an_output_directory_leaves_no_files(tmp_path, monkeypatch):
    """The run's captures and reports go to a private temporary directory, removed when the
    run ends — also when it fails."""
    monkeypatch.setattr(em, "check_environment", lambda: None)
    monkeypatch.setattr(em, "check_supported", lambda *a: None)
    monkeypatch.setattr(em.tempfile, "tempdir", str(tmp_path))
    seen = []

    def fail(cfg, r, work, **kw):
        (work / "ingress.pcap").write_bytes(b"x")
        seen.append(work)
        raise em.CoaplabError("emulate: the coaplab clients failed: boom")

    monkeypatch.setattr(em, "_run_in", fail)
    with pytest.raises(em.CoaplabError, match="boom"):
        em.run_one({"coap": {"transport": "udp"}}, 0)
    assert seen and seen[0].parent == tmp_path and list(tmp_path.iterdir()) == []
    kept = tmp_path / "kept"
    with pytest.raises(em.CoaplabError):
        em.run_one({"coap": {"transport": "udp"}}, 0, out_dir=kept)
    assert (kept / "ingress.pcap").exists()  # --out: the user's directory keeps everything


def test_crossval_shows_an_unknown_histogram_as_na():
    # A third-party client's own retransmissions are not visible from outside: its emulated
    # histogram is unknown, shown "n/a" — never as 0 retransmissions ("6 | 0 | -6").
    from coaplab.analyse.stats import PERCENTILE_KEYS
    from coaplab.stacks.crossval import crossval_rows, crossval_table

    def summary(hist, client=None):
        s = {"name": "x", "config_id": "c", "replications": 1, "fct_s": {k: 1.0 for k in PERCENTILE_KEYS},
             "exchanges_completed": 6, "exchanges_failed": 0, "packets": {"sent": 12},
             "retransmission_histogram": hist}
        if client:
            s["emulation"] = {"client": client, "server": "coaplab", "lateness_us_mean": 0.0,
                              "lateness_us_p99_max": 0.0, "invalid_runs": 0}
        return s

    # Simulated: 2 exchanges without, 2 with one, 2 with two retransmissions: 0 + 2 + 4 = 6.
    sim = summary([2, 2, 2])
    rows = {label: (a, b, d) for label, a, b, d in crossval_rows(sim, summary([], "libcoap"))}
    assert rows["retransmissions (completed exchanges)"] == (6, "n/a", "n/a")
    assert [rows[f"exchanges with {k} retransmissions"] for k in range(3)] == [(2, "n/a", "n/a")] * 3
    (line,) = [t for t in crossval_table([(sim, summary([], "libcoap"))]).splitlines() if "(completed exchanges)" in t]
    assert line.split()[-3:] == ["6", "n/a", "n/a"]
    # coaplab's own client counts them: 6 exchanges without retransmission, so 0 and -6.
    rows = {label: (a, b, d) for label, a, b, d in crossval_rows(sim, summary([6], "coaplab"))}
    assert rows["retransmissions (completed exchanges)"] == (6, 0, "-6")


def test_emulated_runs_report_elapsed_time_and_estimated_end():
    # Emulated runs last in real time: each run's progress line says where the sequence stands.
    from coaplab.stacks.emulate import progress_text

    assert progress_text(0, 12, 0.4) == "run 1 of 12, 0 s elapsed"
    # 2 runs done in 64 s: 32 s each, 10 left → 320 s.
    assert progress_text(2, 12, 64.0) == "run 3 of 12, 1 min 4 s elapsed, about 5 min 20 s left"
