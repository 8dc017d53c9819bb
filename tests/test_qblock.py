"""RFC 9177 Q-Block through the Python front and the CLI (docs/model.md "Q-Block")."""

import subprocess
import sys
from pathlib import Path

import pytest

import coaplab
from coaplab.describe.scenario import load_scenario

ROOT = Path(__file__).resolve().parent.parent


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "coaplab.cli", *args], capture_output=True, text=True, timeout=600, check=False)


@pytest.mark.parametrize("example, direction", [("qblock-firmware", "firmware"), ("qblock-upload", "upload")])
def test_examples_run_and_print_the_qblock_lines(example, direction):
    r = _cli("run", str(ROOT / "examples" / f"{example}.toml"), "--no-db")
    assert r.returncode == 0, r.stderr
    assert f"Q-Block ({direction}):" in r.stdout
    assert "recovery requests" in r.stdout


def test_summary_pools_the_counters():
    # 1000 B in 256 B blocks on the error-free link: 4 blocks, one set, no recovery; 2
    # replications of 2 clients: 4 transfers, 16 blocks.
    raw = {"seed": 1, "replications": 2, "link": {"errors": "none", "mtu": 1500, "buffer_bytes": 100000},
           "workload": {"kind": "firmware", "clients": 2, "resource_bytes": 1000},
           "coap": {"block_mode": "q-block"}}
    [s] = coaplab.run(raw, jobs=1).summaries
    q = s["qblock"]
    assert (q["direction"], q["transfers_completed"], q["transfers_failed"]) == ("firmware", 4, 0)
    assert (q["blocks_sent"], q["blocks_recovered"], q["recovery_requests"]) == (16, 0, 0)
    # Down: 3 × 292 + 268 = 1144 B per transfer (crates/engine/src/coap/qblock_wire.rs).
    assert q["bytes_down"] == 4 * 1144


def test_keys_stay_absent_unless_given():
    [c] = load_scenario({"workload": {"kind": "firmware"}}).configurations()
    assert not {"block_mode", "q_block_max_payloads", "q_block_non_timeout_s"} & set(c["coap"])


@pytest.mark.parametrize("toml, message", [
    ('[workload]\nkind = "continuous"\n[coap]\nblock_mode = "q-block"\n',
     'coaplab: error: coap.block_mode: "q-block" needs a body: workload.kind "firmware" or "upload"; kind is "continuous"'),
    ('[workload]\nkind = "upload"\n', 'coaplab: error: workload.kind: "upload" needs coap.block_mode = "q-block"'),
    ('[workload]\nkind = "firmware"\n[coap]\nblock_mode = "q-block"\nq_block_max_payloads = 0\n',
     "coaplab: error: coap.q_block_max_payloads"),
    ('[workload]\nkind = "firmware"\n[coap]\nblock_mode = "qblock"\n', 'coaplab: error: coap.block_mode: "qblock" is not allowed'),
])
def test_bad_input_exits_2_with_one_line(tmp_path, toml, message):
    f = tmp_path / "bad.toml"
    f.write_text(toml)
    r = _cli("run", str(f), "--no-db")
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(message), r.stderr
    assert "Traceback" not in r.stderr
