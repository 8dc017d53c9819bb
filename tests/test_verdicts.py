"""`coaplab reproduce`: verdicts first (published, simulated with its interval, difference,
tolerance from the data files, verdict, unit), the studies' statements as verdicts, details on
request (docs/reproduce.md "Verdicts")."""

import json
import re

import pytest

from coaplab.analyse.intervals import percentile_intervals, ratio_interval
from coaplab.describe.scenario import load_scenario
from coaplab.suites.calibration import load_cocoa2016, load_reference
from coaplab.suites.statements import load_statement_figures, statement_verdicts
from coaplab.suites.verdicts import cells, judge, published_for, tolerance_of


def test_the_verdict_table_comes_first_and_details_only_on_request(cli):
    out = cli("reproduce", "udp-1client-continuous", "--no-db", "--no-progress")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "== udp-1client-continuous: verdicts =="
    assert lines[1].split() == ["figure", "configuration", "stat", "published", "simulated", "[95", "%", "CI]",
                                "difference", "tolerance", "verdict", "unit"]
    # Ten rows (two algorithms × p10 … p90), each: published, simulated [low, high], difference,
    # the tolerance of published.toml (0.1 %), the verdict its magnitude gives, seconds.
    rows = re.findall(r"^  udp-1client-continuous\s+(default|cocoa)\s+(p\d\d)\s+([\d.]+)\s+([\d.]+) \[([\d.]+), ([\d.]+)\]"
                      r"\s+([+-][\d.]+) %\s+±0\.1 %\s+(met|missed)\s+s$", out.stdout, re.MULTILINE)
    assert len(rows) == 10
    for _, _, pub, sim, low, high, diff, verdict in rows:
        assert float(low) <= float(sim) <= float(high)
        assert abs((float(sim) / float(pub) - 1) * 100 - float(diff)) < 0.003  # sim printed to 1 ms
        if abs(abs(float(diff)) - 0.1) > 0.0006:  # not decided by the printed digits' rounding
            assert verdict == ("met" if abs(float(diff)) < 0.1 else "missed")
    assert "no published figure" not in out.stdout and "details ==" not in out.stdout
    detailed = cli("reproduce", "udp-1client-continuous", "--no-db", "--no-progress", "--details").stdout
    assert detailed.index("verdicts ==") < detailed.index("== udp-1client-continuous: details ==")


def test_markdown_holds_only_published_rows_with_units(cli):
    out = cli("reproduce", "udp-1client-continuous", "udp-10clients-errors", "--no-db", "--no-progress",
              "--format", "markdown")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == ("| experiment | figure | configuration | stat | published | simulated [95 % CI] | difference |"
                        " tolerance | verdict | unit |")
    assert "| — | — |" not in out.stdout
    assert len(lines) == 2 + 10 and all(ln.endswith("| s |") for ln in lines[2:])
    assert "udp-10clients-errors" not in out.stdout  # no published figure: no row


def test_json_rows_are_the_verdicts_and_details_add_the_rest(cli):
    out = cli("reproduce", "udp-1client-continuous", "--no-db", "--no-progress", "--format", "json")
    rows = [json.loads(ln) for ln in out.stdout.splitlines()]
    assert len(rows) == 10 and {r["unit"] for r in rows} == {"s"} and {r["tolerance"] for r in rows} == {0.001}
    assert all(r["ci_low"] <= r["simulated"] <= r["ci_high"] for r in rows)
    out = cli("reproduce", "udp-10clients-errors", "--no-db", "--no-progress", "--format", "json")
    assert out.stdout == ""


def test_tolerances_come_from_the_data_files():
    figs = {f["id"]: f for f in load_reference()}
    assert tolerance_of(figs["udp-50clients-continuous-2500B"], "default") == 0.01
    assert tolerance_of(figs["firmware-1client"], "tcp/newreno@14100") == 0.05
    assert tolerance_of(figs["firmware-1client"], "udp/default@2500") is None  # none stated
    assert tolerance_of(figs["retx-hist-400-infinite"], "cocoa/random") == 0.10
    table2 = next(f for f in load_cocoa2016() if f["id"] == "cocoa-gprs-table2")
    assert tolerance_of(table2, "") == 0.10


def test_verdict_cells_by_hand():
    assert judge(0.0099, 0.01) == "met" and judge(-0.0101, 0.01) == "missed"
    assert judge(0.5, None) == "no tolerance set" and judge(None, 0.01) == "not simulated"
    row = {"unit": "s", "stat": "p50", "published": 2.0, "simulated": 2.5, "ci_low": 2.25, "ci_high": 2.75,
           "diff": 0.25, "tolerance": None}
    assert cells(row) == {"published": "2.000", "simulated": "2.500 [2.250, 2.750]", "diff": "+25.000 %",
                          "tolerance": "—"}
    ms = {"unit": "ms", "stat": "mean RTT", "published": 661.0, "simulated": 675.4, "ci_low": None, "diff": 0.0218,
          "tolerance": 0.1}
    assert cells(ms) == {"published": "661", "simulated": "675", "diff": "+2.180 %", "tolerance": "±10 %"}


def test_percentile_interval_by_hand():
    # Two replications, one client each: FCT 1 and 3. A resample is {1,1}, {1,3} or {3,3}
    # (probabilities 1/4, 1/2, 1/4), its median 1, 2 or 3; the 2.5th and 97.5th percentiles of
    # 2000 such medians are 1 and 3.
    runs = [{"clients": [{"fct_s": 1.0}]}, {"clients": [{"fct_s": 3.0}]}]
    assert percentile_intervals(runs, {"p50": 0.5}) == {"p50": (1.0, 3.0)}
    assert percentile_intervals(runs[:1], {"p50": 0.5}) == {"p50": None}  # one replication: no interval
    # Σ 2 / Σ 4 and Σ 6 / Σ 4: the ratio of a resample is 0.5, 1.0 or 1.5.
    sums = [{"s": 2.0, "n": 4}, {"s": 6.0, "n": 4}]
    assert ratio_interval(sums, "s", "n") == (0.5, 1.5)


def _summary(cc, period, offered, carried, queue_drops, app_drops=0, reps=2):
    return {"config": {"coap": {"cc": cc, "nstart": 1}}, "swept": {"coap.cc": cc, "workload.period_s": period},
            "replications": reps, "unnecessary_retransmissions_total": 0,
            "mesh": {"offered_kbps": offered, "carried_kbps": carried, "mac_queue_drops": queue_drops,
                     "app_drops": app_drops}}


MADE_UP = """
[[figure]]
id = "made-up"
targets = ["t"]
statements = ["carried = offered at low load", "cocoa carries more and drops much less", "default's drops grow tenfold",
              "cocoa-s is measured"]
[[figure.check]]
statement = 0
claims = [{ kind = "equals_offered", algorithms = ["default", "cocoa"], max_offered = 3.0, tolerance = 0.05 }]
[[figure.check]]
statement = 1
where = { "coap.nstart" = 1 }
claims = [
  { kind = "above", metric = "carried", algorithms = ["cocoa"], than = "default", min_offered = 5.0 },
  { kind = "below", metric = "carried", algorithms = ["cocoa"], than = "default", min_offered = 3.0, max_offered = 5.0 },
  { kind = "below", metric = "queue_drops", algorithms = ["cocoa"], than = "default", min_offered = 3.0, margin = 0.6 },
]
[[figure.check]]
statement = 2
claims = [{ kind = "grows", metric = "queue_drops", algorithms = ["default"], min_offered = 3.0, factor = 10.0 }]
[[figure.check]]
statement = 3
claims = [{ kind = "positive", metric = "carried", algorithms = ["cocoa-s"] }]
"""


def test_statement_verdicts_from_a_made_up_result():
    # Offered 2 / 4 / 8 kbit/s. default carries 2.0 / 3.9 / 4.5 and drops 0 / 100 / 400 in two
    # runs (0 / 50 / 200 per run); cocoa 2.0 / 3.8 / 4.8 and 0 / 60 / 200 (0 / 30 / 100 per run).
    summaries = [_summary("default", 9.5, 2.0, 2.0, 0), _summary("default", 4.75, 4.0, 3.9, 100),
                 _summary("default", 2.4, 8.0, 4.5, 400), _summary("cocoa", 9.5, 2.01, 2.0, 0),
                 _summary("cocoa", 4.75, 4.02, 3.8, 60), _summary("cocoa", 2.4, 8.03, 4.8, 200)]
    rows = statement_verdicts("t", summaries, load_statement_figures([MADE_UP]))
    assert [r["verdict"] for r in rows] == ["holds", "holds in part", "does not hold", "not measured"]
    # 1: at 2 kbit/s both carry 2.0 (cocoa 2.0 / 2.01: 0.5 % off).
    assert rows[0]["claims"][0]["measured"].endswith("(carried/offered off by ≤ 0.5 %)")
    # 2: cocoa 4.8 ≥ 4.5 at 8 (yes); 3.8 ≤ 3.9 at 4 (yes); drops 30 and 100 against ≤ 0.4 × 50 = 20
    # and 0.4 × 200 = 80 (no: less, but not 60 % less).
    assert [c["holds"] for c in rows[1]["claims"]] == [True, True, False]
    assert rows[1]["claims"][2]["measured"] == (
        "MAC queue drops (per run) at 4.0 / 8.0 kbit/s offered: cocoa 30 / 100; default 50 / 200"
        " (cocoa below default by ≥ 60 %?)")
    # 3: 50 → 200 per run is ×4, not tenfold.
    assert "default ×4.0" in rows[2]["measured"]
    # 4: no cocoa-s configuration.
    assert rows[3]["claims"][0]["holds"] is None
    assert statement_verdicts("another target", summaries, load_statement_figures([MADE_UP])) == []


@pytest.mark.parametrize("target", ["cooja-dumbbell", "cocoa2016-flocklab-continuous"])
def test_the_packaged_statements_are_checked_for_their_targets(target):
    figs = [f for f in load_statement_figures() if target in f.get("targets", ())]
    assert figs and all(len(f["check"]) == len(f["statements"]) for f in figs)


def test_a_mistyped_experiment_gets_a_suggestion(cli):
    out = cli("reproduce", "cooja-dumell", "--no-db")
    assert out.returncode == 2
    assert "unknown experiment 'cooja-dumell' (did you mean cooja-dumbbell?)" in out.stderr


@pytest.mark.parametrize("change", [{"coap": {"nstart": 4}}, {"coap": {"probing_rate_bps": 1}}, "gprs"])
def test_a_configuration_unlike_the_studies_is_never_set_beside_their_figures(change):
    """The 50-client continuous star with a 2500 B buffer and `default` has a published FCT
    figure (udp-50clients-continuous-2500B); the same population with NSTART 4, with a
    PROBING_RATE, or on another network is another experiment and must not be given its
    verdicts (a GPRS scenario cannot set the star's buffer: its resolved configuration is
    changed by hand)."""
    base = {"workload": {"kind": "continuous", "clients": 50, "exchanges": 50},
            "link": {"buffer_bytes": 2500}, "coap": {"cc": "default", "max_retransmit": 20}}
    [same] = load_scenario(base).configurations()
    figures = load_reference()
    assert [f for f, _, _ in published_for(same, figures)] == ["udp-50clients-continuous-2500B"]
    if change == "gprs":
        other = {**same, "network": {"kind": "gprs"}}
    else:
        [other] = load_scenario({**base, "coap": {**base["coap"], **change["coap"]}}).configurations()
    assert published_for(other, figures) == []
