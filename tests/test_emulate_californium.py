"""Californium (Eclipse, Java) as an emulation endpoint (docs/emulation.md, "Third-party
endpoints"): coaplab's driver java/californium, built by scripts/setup.sh into target/californium
(`coaplab setup californium`, whose own tests are tests/test_setup_californium.py).

The emulated runs need root and skip with the reason otherwise (CI runs as root); they need the
driver built, which scripts/setup.sh does when a JDK and Maven are there (installed from
Debian's packages as root): in CI (CI set) a missing driver fails instead of skipping.
The refusals run everywhere.
"""

from __future__ import annotations

import itertools
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from coaplab.cli import main
from coaplab.stacks import californium_setup, thirdparty
from coaplab.stacks import crossval as xv
from coaplab.stacks import emulate as em
from coaplab.stacks import namespaces as netns
from coaplab.stacks.pcapseq import read_pcap
from conftest import need_emulation


def _need_root():
    need_emulation()
    if shutil.which("java") is None or californium_setup.driver_dir() is None:
        if os.environ.get("CI"):
            pytest.fail("Californium's driver is required in CI (scripts/setup.sh builds it)")
        pytest.skip("Californium's driver is not built (bash scripts/setup.sh, with default-jdk-headless and maven)")


def _one_exchange(cc: str, **coap) -> dict:
    return {
        "name": f"emu-cf-{cc}", "seed": 1, "replications": 1,
        "link": {"buffer_bytes": 28200},
        "workload": {"kind": "continuous", "clients": 1, "exchanges": 1},
        "coap": {"cc": cc, **coap},
    }


@pytest.mark.parametrize("cc", ["default", "cocoa", "cocoa-s@californium", "basic-rto", "linux-rto@californium",
                                "peakhopper-rto"])
def test_one_exchange_per_algorithm(cc, tmp_path):
    """One GET through Californium's client, its CONGESTION_CONTROL_ALGORITHM set from coap.cc,
    against coaplab's server: it completes with no retransmission (no loss, the RTT of the
    default testbed ~0.7 s is far below the 2 s initial timer), as in the simulator."""
    _need_root()
    # The drafts' names run Californium's code, not the simulator's draft model: a mismatch
    # crossval refuses unless asked (tests/test_crossval_like.py); here only the mode matters.
    (sim, emu), = xv.crossval(_one_exchange(cc), client="californium", progress=False, out_dir=tmp_path,
                              allow_mismatch=True)
    assert sim["exchanges_completed"] == 1
    assert emu["exchanges_completed"] == 1 and emu["exchanges_failed"] == 0
    assert emu["retransmission_histogram"] == [1]
    # The mode Californium's stack was built with (CoapUdpStack reads it to pick its layer).
    mode = thirdparty.CALIFORNIUM_CC[cc]
    run_dir, = [p for p in tmp_path.iterdir() if p.is_dir()]
    assert f"CONGESTION_CONTROL_ALGORITHM={mode}\n" in (run_dir / "clients.log").read_text()
    # The same link and packets: the emulated exchange takes the simulated time (the JVM's
    # processing adds ms; Californium's token is 8 bytes, the simulator's empty — 64 bits more per
    # message each way, 64/60000 + 64/30000 s = 3.2 ms on the default link). 0.1 s: on a 2-core
    # machine busy building Rust the JVM once added 71 ms; a wrong link model is off by far more.
    assert emu["fct_s"]["p50"] == pytest.approx(sim["fct_s"]["p50"], abs=0.1)


# Every packet lost on the link (a chain whose two states both lose everything): the request is
# sent 1 + MAX_RETRANSMIT times, each lost after serialisation, and dropped.pcap holds them all.
ALL_LOST = {"good_mean_ms": 1000, "good_min_ms": 1, "good_max_ms": 10000, "good_loss": 1.0,
            "bad_mean_ms": 1000, "bad_min_ms": 1, "bad_max_ms": 10000, "bad_loss": 1.0}


# Expected intervals between the transmissions of one request, with ACK_TIMEOUT 0.5 s,
# ACK_RANDOM_FACTOR 1.0 (no dithering: ReliabilityLayer.getRandomTimeout returns ACK_TIMEOUT
# when the factor is <= 1) and MAX_RETRANSMIT 3, from Californium 3.14.0's source:
# - default (no congestion control): ReliabilityLayer.updateRetransmissionTimeout doubles the
#   timer (ACK_TIMEOUT_SCALE 2.0): 0.5, 1.0, 2.0 s.
# - cocoa: CongestionControlLayer.updateRetransmissionTimeout starts from the remote endpoint's
#   RTO (ACK_TIMEOUT before any sample: Cocoa.CocoaRemoteEndpoint), at least MIN_RTO = 500 ms,
#   and fixes the exchange's back-off factor once, from that initial timer:
#   Cocoa.calculateVBF(500 ms) = VBFLOW = 3 (below LOWERVBFLIMIT = 1000 ms): 0.5, 1.5, 4.5 s
#   (the drafts' CoCoA gives the same three: its factor is also taken from the initial RTO).
# - linux-rto: CongestionControlLayer.calculateVBF returns ACK_TIMEOUT_SCALE (2.0), no
#   dithering: 0.5, 1.0, 2.0 s.
@pytest.mark.parametrize("cc, intervals", [("default", [0.5, 1.0, 2.0]), ("cocoa", [0.5, 1.5, 4.5]),
                                           ("linux-rto", [0.5, 1.0, 2.0])])
def test_retransmission_timers_from_the_capture(cc, intervals, tmp_path):
    _need_root()
    scenario = _one_exchange(cc, ack_timeout_s=0.5, ack_random_factor=1.0, max_retransmit=3)
    scenario["link"]["errors"] = ALL_LOST
    out = tmp_path / "out"
    em.emulate(scenario, client="californium", progress=False, out_dir=out, max_seconds=20)
    run_dir, = [p for p in out.iterdir() if p.is_dir()]
    sent = [t / 1e9 for t, _ in read_pcap(run_dir / "dropped.pcap")]
    assert len(sent) == 4, sent  # 1 + MAX_RETRANSMIT, all lost
    got = [b - a for a, b in itertools.pairwise(sent)]
    # Same-size packets on an idle link: the intervals are the timers, give or take the JVM's
    # scheduling (Californium's timers are in ms) and the emulator's lateness.
    # (abs 0.1 s: a loaded 2-core machine delayed one JVM timer by 51 ms; the algorithms differ by
    # ≥ 0.5 s in at least one interval, so the check still tells them apart.)
    assert got == pytest.approx(intervals, abs=0.1)


def test_firmware_block_wise_against_coaplab_and_californium_servers(tmp_path):
    """A 2048-byte firmware (32 blocks of 64 B) fetched block by block by Californium's client
    from Californium's server: every block completes, none retransmitted (no loss)."""
    _need_root()
    scenario = {
        "name": "emu-cf-fw", "seed": 1, "replications": 1, "link": {"buffer_bytes": 28200},
        "workload": {"kind": "firmware", "clients": 1, "resource_bytes": 2048, "block_szx": 2},
        "coap": {"cc": "cocoa"},
    }
    (sim, emu), = xv.crossval(scenario, client="californium", server="californium", progress=False,
                              out_dir=tmp_path, allow_mismatch=True)
    # 2048 / 2^(2+4) = 32 blocks, each one exchange.
    assert emu["exchanges_completed"] == 32 == sim["exchanges_completed"]
    assert emu["retransmission_histogram"] == [32]


def test_coaplab_client_against_californium_server(tmp_path):
    """coaplab's client fetches a 4096-byte firmware (16 blocks of 256 B) from Californium's
    server: every block completes, and the transfer takes the simulated time within 6 %
    (measured +0.8 %: ~6 ms of JVM processing per block; its block responses are the
    simulator's size, 292 bytes of IP, the first 3 bytes more)."""
    _need_root()
    scenario = {
        "name": "emu-cf-srv", "seed": 1, "replications": 1, "link": {"buffer_bytes": 28200},
        "workload": {"kind": "firmware", "clients": 1, "resource_bytes": 4096},
        "coap": {"cc": "cocoa"},
    }
    (sim, emu), = xv.crossval(scenario, server="californium", progress=False, out_dir=tmp_path)
    # 4096 / 2^(4+4) = 16 blocks (the default block_szx 4: 256 B).
    assert emu["exchanges_completed"] == 16 == sim["exchanges_completed"]
    # 6 %: +0.8 % on an idle machine, +5.3 % once on a busy one (the JVM's per-block processing).
    assert emu["fct_s"]["p50"] == pytest.approx(sim["fct_s"]["p50"], rel=0.06)


def test_unknown_algorithm_is_one_line_and_exit_2(tmp_path, capsys):
    _need_root()
    scenario = tmp_path / "s.toml"
    scenario.write_text('[workload]\nkind = "continuous"\n[coap]\ncc = "fasor"\n')
    assert main(["emulate", str(scenario), "--client", "californium", "--no-db"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == ("coaplab: error: coap.cc: 'fasor' with --client californium; allowed: default, cocoa, "
                   "cocoa@californium, cocoa-s, cocoa-s@californium, basic-rto, basic-rto@californium, linux-rto, "
                   "linux-rto@californium, peakhopper-rto, peakhopper-rto@californium")


@pytest.mark.parametrize("toml, args, message", [
    ('[workload]\nkind = "continuous"\n[coap]\nmax_retransmit = 0\n', ["--client", "californium"],
     ("coaplab: error: coap.max_retransmit: 0 with --client californium; allowed: at least 1 "
     "(Californium's CoapConfig.MAX_RETRANSMIT minimum)")),
    ('[workload]\nkind = "firmware"\nresource_bytes = 20000000\n', ["--server", "californium"],
     ("coaplab: error: workload.resource_bytes: 20000000 with --server californium; allowed: at most 16777216 "
     "(the resource is held in the server's memory)")),
    ('[workload]\nkind = "random"\n', ["--client", "californium"],
     ("coaplab: error: workload.kind: 'random' with --client californium is not emulated yet; "
     "allowed: firmware, continuous with exchanges")),
])
def test_other_refusals_are_one_line_and_exit_2(toml, args, message, tmp_path, capsys):
    _need_root()
    scenario = tmp_path / "s.toml"
    scenario.write_text(toml)
    assert main(["emulate", str(scenario), *args, "--no-db"]) == 2
    assert capsys.readouterr().err.strip() == message


@pytest.mark.parametrize("missing", ["jar", "java"])
def test_californium_missing_is_one_line_and_exit_2(missing, tmp_path, capsys, monkeypatch):
    """No driver built, or no Java (a fresh clone without a JDK): refused before anything is
    created, in one line saying what to install."""
    if os.geteuid() != 0:
        pytest.skip("the environment check (root) comes first")
    real_which = shutil.which
    if missing == "jar":
        # Neither a checkout's target/californium nor the cache holds the driver.
        monkeypatch.setattr(thirdparty, "driver_dir", lambda: None)
        monkeypatch.setenv("COAPLAB_CACHE_DIR", str(tmp_path / "cache"))
        monkeypatch.setattr(thirdparty.shutil, "which", lambda n, *a, **k: "/usr/bin/java" if n == "java" else real_which(n))
        jar = tmp_path / "cache" / "californium" / "californium-driver-1.jar"
        message = (f"coaplab: error: emulate: Californium's driver is not built ({jar} is missing); "
                   "run coaplab setup californium (needs Maven and a JDK: apt-get install default-jdk-headless maven)")
    else:
        monkeypatch.setattr(thirdparty.shutil, "which", lambda n, *a, **k: None if n == "java" else real_which(n))
        message = ("coaplab: error: emulate: Californium needs Java, which is missing; apt-get install "
                   "default-jdk-headless maven, then coaplab setup californium")
    scenario = tmp_path / "s.toml"
    scenario.write_text('[workload]\nkind = "continuous"\n[coap]\ncc = "cocoa"\n')
    assert main(["emulate", str(scenario), "--server", "californium", "--no-db"]) == 2
    assert capsys.readouterr().err.strip() == message


def _californium_jvms() -> set[int]:
    """PIDs of JVMs running coaplab's Californium driver."""
    found = set()
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                cmd = (d / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"coaplab.CaliforniumDriver" in cmd:
                found.add(int(d.name))
    return found


def test_sigint_leaves_no_jvm_behind(tmp_path):
    """SIGINT while Californium's clients and server run: the command exits 130 and no JVM,
    namespace or TUN device is left (the clients' JVM dies with its driver: PR_SET_PDEATHSIG
    and the driver's signal handlers; the server's is ended by `timeout`, which passes SIGTERM on)."""
    _need_root()
    before = _californium_jvms()
    scenario = tmp_path / "long.toml"
    scenario.write_text('name = "emu-cf-sigint"\n[workload]\nkind = "continuous"\nclients = 2\nexchanges = 50\n')
    p = subprocess.Popen([sys.executable, "-m", "coaplab.cli", "emulate", str(scenario), "--no-db", "--no-progress",
                          "--client", "californium", "--server", "californium"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    deadline = time.monotonic() + 30
    # Both JVMs up (server, then clients), and time 0 passed.
    while len(_californium_jvms() - before) < 2 and time.monotonic() < deadline and p.poll() is None:
        time.sleep(0.1)
    assert len(_californium_jvms() - before) == 2, p.stderr.read() if p.poll() is not None else "no JVMs"
    time.sleep(4.0)
    p.send_signal(signal.SIGINT)
    try:
        p.wait(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 130, p.stderr.read()
    end = time.monotonic() + 5  # a killed JVM takes a moment to be reaped
    while _californium_jvms() - before and time.monotonic() < end:
        time.sleep(0.1)
    assert _californium_jvms() - before == set()
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=False).stdout
    assert f"coaplab-{p.pid}-" not in out
    assert netns.TUN not in subprocess.run(["ip", "-o", "link"], capture_output=True, text=True, check=False).stdout
