"""Bit-identity check (docs/design.md, "Refactors that must not change results"): the full JSON
summaries of the configurations in ``tests/golden/cases.py`` (minus ``wall_s``) and the hashes
of their pcaps and trace CSVs must equal the stored ones, byte for byte."""

from __future__ import annotations

import hashlib
import json
import sys
import tempfile
from pathlib import Path

GOLDEN = Path(__file__).resolve().parent / "golden"
sys.path.insert(0, str(GOLDEN))

from cases import cases


def compute(workdir: Path | None = None) -> tuple[list[str], dict[str, str]]:
    """Runs every golden case; returns the canonical summary lines and {file name: sha256}."""
    import coaplab

    work = Path(workdir or tempfile.mkdtemp(prefix="coaplab-golden-"))
    lines: list[str] = []
    hashes: dict[str, str] = {}
    for case in cases():
        pcap, trace = work / case["name"] / "pcap", work / case["name"] / "trace"
        res = coaplab.run(case, jobs=2, pcap_dir=pcap, trace_dir=trace if case["trace"] else None)
        assert not res.failures, res.failures
        for s in res.summaries:
            s = {k: v for k, v in s.items() if k != "wall_s"}
            lines.append(json.dumps(s, sort_keys=True))
        for d in (pcap, trace):
            for f in sorted(d.glob("*")) if d.exists() else []:
                hashes[f.name] = hashlib.sha256(f.read_bytes()).hexdigest()
    return lines, hashes


def test_results_are_bit_identical(tmp_path):
    lines, hashes = compute(tmp_path)
    stored = (GOLDEN / "summaries.jsonl").read_text().splitlines()
    assert len(lines) == len(stored) >= 30
    for got, want in zip(lines, stored):
        name = json.loads(want)["name"]
        assert got == want, f"{name}: summary differs from the stored one"
    stored_hashes = json.loads((GOLDEN / "hashes.json").read_text())
    assert set(hashes) == set(stored_hashes)
    differing = sorted(k for k in hashes if hashes[k] != stored_hashes[k])
    assert not differing, f"files differ from the stored ones: {differing[:5]}"
