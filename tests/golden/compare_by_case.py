"""Per-case comparison of the golden set with the stored files, for a change that is meant to
alter some cases only (a model change bumps MODEL_VERSION, so every config_id — and every file
name, which carries it — changes; this compares the summaries without config_id and the pcap /
trace files by case, replication and kind). Prints SAME / DIFF per case and the files whose
content differs. Never writes the stored files.

    .venv/bin/python tests/golden/compare_by_case.py
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
from pathlib import Path

GOLDEN = Path(__file__).resolve().parent
sys.path.insert(0, str(GOLDEN.parent))

from test_golden import compute


def _strip(line: str) -> dict:
    d = json.loads(line)
    d.pop("config_id", None)
    d.pop("fct_replications", None)  # added to summaries with model 2 (derived from the runs)
    return d


def main() -> int:
    lines, hashes = compute(Path(tempfile.mkdtemp(prefix="coaplab-golden-cmp-")))
    stored = (GOLDEN / "summaries.jsonl").read_text().splitlines()
    by_case: dict[str, list[set[str]]] = {}
    for got, want in zip(lines, stored):
        g, w = _strip(got), _strip(want)
        by_case.setdefault(w["name"], []).append({k for k in set(g) | set(w) if g.get(k) != w.get(k)})
    for name, diffs in by_case.items():
        keys = sorted(set().union(*diffs))
        print(("SAME " if not keys else "DIFF ") + name + (f"  keys: {keys}" if keys else ""))
    norm = lambda d: {re.sub(r"-[0-9a-f]{16}-rep", "-rep", k): v for k, v in d.items()}
    a, b = norm(hashes), norm(json.loads((GOLDEN / "hashes.json").read_text()))
    print("files:", len(a), "stored:", len(b), "names only on one side:", sorted(set(a) ^ set(b)))
    print("files with other content:", sorted(k for k in a if a[k] != b.get(k)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
