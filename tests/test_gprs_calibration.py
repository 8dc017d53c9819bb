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


def test_the_rtt_variation_pairs_each_clients_consecutive_strong_samples(tmp_path):
    # The calibration script's sample-to-sample statistics (docs/validation.md "GPRS"), on a
    # hand-written trace: client 0's strong samples 1.0, 2.0, 1.0, 1.2 s (a weak one and a
    # start between them are skipped), client 1's 3.0 s alone (no pair).
    import importlib.util

    spec = importlib.util.spec_from_file_location("gprs_calibration", SCRIPT)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    p = tmp_path / "t-trace.csv"
    rows = ["client,time_s,event,exchange,timer_s,rto_s,sample_s,sample_kind",
            "0,4.0,response,3,,,1.2,strong", "0,1.0,response,0,,,1.0,strong",
            "0,2.0,response,1,,,2.0,strong", "0,2.5,response,9,,,9.0,weak", "0,2.6,start,9,2.0,,,",
            "0,3.0,response,2,,,1.0,strong", "1,1.5,response,0,,,3.0,strong"]
    p.write_text("\n".join(rows) + "\n")
    v = mod.variation([p])
    # Ratios in time order: 2.0/1.0 = 2, 1.0/2.0 = 0.5, 1.2/1.0 = 1.2: one of three above 1.5;
    # sorted [0.5, 1.2, 2.0], the 90th percentile's index int(0.9 × 2) = 1: 1.2; |Δ| 1.0, 1.0,
    # 0.2: mean 2.2 / 3.
    assert abs(v["ratio_above_1_5"] - 1 / 3) < 1e-12
    assert abs(v["ratio_p90"] - 1.2) < 1e-12
    assert abs(v["mean_abs_delta_s"] - 2.2 / 3) < 1e-12
    # No strong sample: NaN, not an error.
    q = tmp_path / "u-trace.csv"
    q.write_text(rows[0] + "\n0,1.0,start,0,2.0,,,\n")
    assert mod.variation([q])["ratio_above_1_5"] != mod.variation([q])["ratio_above_1_5"]
