"""Per-case comparison of the golden set with the stored files, for a change that is meant to
alter some cases only (a model change bumps MODEL_VERSION, so every config_id — and every file
name, which carries it — changes; this compares the summaries without config_id and the pcap /
trace files by case, replication and kind). Prints SAME / DIFF per case and the files whose
content differs. Never writes the stored files.

    .venv/bin/python tests/golden/compare_by_case.py
    .venv/bin/python tests/golden/compare_by_case.py --added-keys-ok

``--added-keys-ok``: a summary key that only the computed side has (a new field, such as the
meshes' ``energy`` of docs/energy.md) is listed as ADDED instead of making the case DIFF; every
key the stored summary has must still be identical. This is how a change that only adds fields
shows that no stored figure moved, before the set is re-stored with ``tests/golden/cases.py --write``.
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
    added_ok = "--added-keys-ok" in sys.argv[1:]
    lines, hashes = compute(Path(tempfile.mkdtemp(prefix="coaplab-golden-cmp-")))
    stored = (GOLDEN / "summaries.jsonl").read_text().splitlines()
    by_case: dict[str, list[set[str]]] = {}
    added: dict[str, set[str]] = {}
    for got, want in zip(lines, stored):
        g, w = _strip(got), _strip(want)
        new = set(g) - set(w) if added_ok else set()
        added.setdefault(w["name"], set()).update(new)
        by_case.setdefault(w["name"], []).append({k for k in (set(g) | set(w)) - new if g.get(k) != w.get(k)})
    for name, diffs in by_case.items():
        keys = sorted(set().union(*diffs))
        extra = f"  ADDED: {sorted(added[name])}" if added.get(name) else ""
        print(("SAME " if not keys else "DIFF ") + name + (f"  keys: {keys}" if keys else "") + extra)
    norm = lambda d: {re.sub(r"-[0-9a-f]{16}-rep", "-rep", k): v for k, v in d.items()}
    a, b = norm(hashes), norm(json.loads((GOLDEN / "hashes.json").read_text()))
    print("files:", len(a), "stored:", len(b), "names only on one side:", sorted(set(a) ^ set(b)))
    print("files with other content:", sorted(k for k in a if a[k] != b.get(k)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
