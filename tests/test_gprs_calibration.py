"""The `gprs` preset against the CoCoA study's GPRS figures (Betzler et al., "CoCoA: Congestion
Control for CoAP", IEEE Communications Magazine 2016, Table II; `coaplab/data/cocoa-2016.toml`;
docs/validation.md, "GPRS: the CoCoA study's testbed"): the calibration script on the
`cocoa2016-gprs-continuous` runs of `cocoa` and `default` (15 replications, 180 s; ≈ 11 s)."""

import json
import subprocess
import sys
import tomllib
from importlib import resources
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "examples" / "investigations" / "gprs_calibration.py"


def test_table2_within_ten_percent_and_rtt_grows_with_the_clients():
    out = subprocess.run([sys.executable, str(SCRIPT), "--cc", "cocoa,default", "--json", "--jobs", "2"],
                         capture_output=True, text=True, timeout=600, check=False)
    assert out.returncode == 0, out.stderr
    rows = {(r["cc"], r["clients"]): r for r in map(json.loads, out.stdout.splitlines())}
    # The published figures, read from the packaged copy of the study's Table II.
    text = resources.files("coaplab").joinpath("data/cocoa-2016.toml").read_text(encoding="utf-8")
    fig = next(f for f in tomllib.loads(text)["figure"] if f["id"] == "cocoa-gprs-table2")
    checked = 0
    for cc in ("cocoa", "default"):
        for clients, want in fig[cc].items():
            got = rows[(cc, int(clients))]
            assert abs(1000 * got["mean_initial_rto_s"] / want["initial_rto_ms"] - 1) <= 0.10, (cc, clients, got)
            checked += 1
            if "rtt_ms" in want:
                assert abs(1000 * got["mean_rtt_s"] / want["rtt_ms"] - 1) <= 0.10, (cc, clients, got)
                checked += 1
    assert checked == 12
    # "RTT increases with the amount of active clients due to the queuing of packets in the
    # GPRS modem": strictly, from 10 to 40 clients.
    rtts = [rows[("cocoa", n)]["mean_rtt_s"] for n in (10, 20, 30, 40)]
    assert rtts == sorted(rtts) and len(set(rtts)) == 4
