"""The Californium cross-validation table of docs/emulation.md, "Californium against the models".

    coaplab crossval examples/emulation/californium-star.toml --client californium --no-db > star.txt
    python examples/emulation/californium_table.py examples/emulation/californium-star.toml star.txt

Reads the crossval output (the simulator's `…@californium` model next to Californium's own code
on the emulated link, same seeds) and adds the simulator's drafts' algorithm of the same name
(`cocoa` for `cocoa@californium`, …), simulated here with the scenario's other settings, and
the model again with 8 more bytes on every packet (`link.link_overhead_bytes` + 8): Californium's
requests carry an 8-byte token (CoapConfig.TOKEN_SIZE_LIMIT, default 8) that its responses echo,
the simulator's messages none.
"""

from __future__ import annotations

import re
import sys
import tomllib

from coaplab.execute.runner import run_scenario


def crossval_blocks(text: str) -> dict[str, dict[str, tuple[str, str]]]:
    """coap.cc → metric → (simulated, emulated), from `coaplab crossval`'s printed tables."""
    blocks: dict[str, dict[str, tuple[str, str]]] = {}
    cur = None
    for line in text.splitlines():
        m = re.search(r"coap\.cc=(\S+)\s+simulated vs emulated", line)
        if m:
            cur = blocks.setdefault(m.group(1), {})
            continue
        m = re.match(r"  (\S.*?)\s{2,}(\S+)\s+(\S+)\s+\S+$", line)
        if cur is not None and m:
            cur[m.group(1)] = (m.group(2), m.group(3))
        m = re.match(r"  lateness: .*; (\d+) of (\d+) emulated runs invalid", line)
        if cur is not None and m:
            cur["invalid"] = (m.group(1), m.group(2))
    return blocks


def main(scenario: str, crossval_out: str) -> None:
    with open(scenario, "rb") as f:
        raw = tomllib.load(f)
    names = raw["sweep"]["coap.cc"]
    raw["sweep"] = {"coap.cc": [n.removesuffix("@californium") for n in names]}
    drafts = {s["config"]["coap"]["cc"]: s for s in run_scenario(raw, progress=False).summaries}
    raw["sweep"] = {"coap.cc": names}
    raw.setdefault("link", {})["link_overhead_bytes"] = raw.get("link", {}).get("link_overhead_bytes", 0) + 8
    token = {s["config"]["coap"]["cc"]: s for s in run_scenario(raw, progress=False).summaries}
    with open(crossval_out) as f:
        blocks = crossval_blocks(f.read())
    print("| `coap.cc` | FCT p50 s: draft / model / model + token / Californium "
          "| FCT p95 s: draft / model / model + token / Californium "
          "| retransmissions: draft / model / model + token / Californium | lost to errors: model / Californium |")
    print("|---|---|---|---|---|")
    for name in names:
        d, t, b = drafts[name.removesuffix("@californium")], token[name], blocks[name]

        def retx(s):
            return sum(k * n for k, n in enumerate(s["retransmission_histogram"]))

        row = [f"{d['fct_s']['p50']:.2f} / {float(b['FCT p50 s'][0]):.2f} / {t['fct_s']['p50']:.2f} / {float(b['FCT p50 s'][1]):.2f}",
               f"{d['fct_s']['p95']:.2f} / {float(b['FCT p95 s'][0]):.2f} / {t['fct_s']['p95']:.2f} / {float(b['FCT p95 s'][1]):.2f}",
               (f"{retx(d)} / {b['retransmissions (completed exchanges)'][0]} / {retx(t)} / "
               f"{b['retransmissions (completed exchanges)'][1]}"),
               f"{b['lost to errors'][0]} / {b['lost to errors'][1]}"]
        failed = [d["exchanges_failed"], int(b["exchanges failed"][0]), t["exchanges_failed"], int(b["exchanges failed"][1])]
        if any(failed):
            row[-1] += f" (failed exchanges: {' / '.join(map(str, failed))})"
        label = name if name == "default" else f"{name.removesuffix('@californium')}, {name}"
        print(f"| {label} | " + " | ".join(row) + " |")
    invalid = sum(int(b.get("invalid", ("0", "0"))[0]) for b in blocks.values())
    print(f"\n{invalid} emulated runs invalid (delivery lateness p99 > 1 ms).")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
