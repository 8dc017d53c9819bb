"""Differences with their uncertainty (coaplab.present.compare): two studies whose differences are known
by construction, pairwise differences within a study, the Mann–Whitney U test against values
computed by hand, and the one-line refusals of bad input."""

import json
import math

import pytest

from coaplab.present import compare
from coaplab.present.compare import mann_whitney_u

# --------------------------------------------------------------------------- Mann–Whitney U by hand


def test_rank_test_exact_small_sample_by_hand():
    # x = 1 3 5, y = 2 4 6 7. U_x counts pairs with x > y: 1 beats none, 3 beats 2, 5 beats 2
    # and 4 → U_x = 0 + 1 + 2 = 3 (U_y = 3·4 − 3 = 9). Under the null every one of the
    # C(7, 3) = 35 orderings is equally likely, and U_x = u for as many of them as there are
    # partitions of u into at most 3 parts each ≤ 4: u = 0: {} → 1; 1: {1} → 1; 2: {2}, {1,1}
    # → 2; 3: {3}, {2,1}, {1,1,1} → 3. P(U ≤ 3) = 7/35, two-sided p = 2·7/35 = 0.4.
    t = mann_whitney_u([1.0, 3.0, 5.0], [2.0, 4.0, 6.0, 7.0])
    assert t == {"u": 3.0, "p": pytest.approx(0.4), "method": "exact", "n": [3, 4]}
    # Swapped: U of the first is now 9; the distribution is symmetric, p the same.
    t = mann_whitney_u([2.0, 4.0, 6.0, 7.0], [1.0, 3.0, 5.0])
    assert t["u"] == 9.0 and t["p"] == pytest.approx(0.4)


def test_rank_test_complete_separation_by_hand():
    # Every x above every y: U_x = 3·3 = 9, the largest value; one ordering of C(6, 3) = 20
    # gives it (and one gives 0), so p = 2/20 = 0.1.
    t = mann_whitney_u([10.0, 11.0, 12.0], [1.0, 2.0, 3.0])
    assert t["u"] == 9.0 and t["p"] == pytest.approx(0.1) and t["method"] == "exact"


def test_rank_test_with_ties_normal_approximation_by_hand():
    # x = 1 2 2, y = 2 3 3. U_x: 1 beats nothing; each 2 ties the y = 2 (½) and beats nothing
    # → U_x = 1. m = n = 3, N = 6, mean m·n/2 = 4.5. Tie groups: value 2 three times, 3 twice:
    # Σ(t³ − t) = 24 + 6 = 30. Variance m·n/12 · ((N + 1) − 30/(N(N − 1))) = 0.75 · (7 − 1) =
    # 4.5. With the continuity correction z = (|1 − 4.5| − 0.5)/√4.5 = 3/√4.5 = √2, and the
    # two-sided p = erfc(z/√2) = erfc(1) = 0.157299…
    t = mann_whitney_u([1.0, 2.0, 2.0], [2.0, 3.0, 3.0])
    assert t["u"] == 1.0 and t["method"] == "normal"
    assert t["p"] == pytest.approx(math.erfc(1.0)) and t["p"] == pytest.approx(0.157299, abs=1e-6)


def test_rank_test_all_equal_and_empty():
    assert mann_whitney_u([0.0, 0.0], [0.0, 0.0, 0.0]) == {"u": 3.0, "p": 1.0, "method": "normal", "n": [2, 3]}
    assert mann_whitney_u([], [1.0])["u"] is None


def test_exact_null_distribution_counts():
    # m = 2, n = 2: the C(4, 2) = 6 orderings give U = 0, 1, 2, 2, 3, 4 → counts 1 1 2 1 1.
    assert compare._u_counts(2, 2) == [1, 1, 2, 1, 1]
    assert sum(compare._u_counts(3, 4)) == 35


# --------------------------------------------------------------------------- the bootstrap on hand-made runs


def _runs(*per_replication, throughput=None):
    return [{"clients": [{"fct_s": v, "unnecessary_retransmissions": 0} for v in fcts],
             "throughput_exchanges_per_s": (throughput or [1.0] * len(per_replication))[i]}
            for i, fcts in enumerate(per_replication)]


def test_difference_of_shifted_samples():
    # The second configuration is the first with every FCT 2 s later: the pooled median moves
    # by exactly 2 (medians 2.5 and 4.5 of 1 2 3 4 5 6 resp. 3 4 5 6 7 8 … pooled per side).
    a = compare.Sample(_runs([1.0, 2.0], [3.0, 4.0], [5.0, 6.0]), "a")
    b = compare.Sample(_runs([3.0, 4.0], [5.0, 6.0], [7.0, 8.0]), "b")
    d = compare.difference(a, b, ["fct_median_s"])["fct_median_s"]
    assert (d["first"], d["second"], d["difference"]) == (3.5, 5.5, 2.0)
    # a* and b* − 2 are independent resamples of the same three replications, so the resampled
    # difference is 2 + (median(b* − 2) − median(a*)), symmetric about 2: the interval holds 2.
    assert d["low"] < 2.0 < d["high"]
    # The rank test over per-replication medians 1.5 3.5 5.5 vs 3.5 5.5 7.5: U = 0 + ½ + (1 + ½)
    # = 2 (ties: normal approximation).
    assert d["rank_test"]["u"] == 2.0 and d["rank_test"]["method"] == "normal"


def test_estimate_equals_the_summary_statistics():
    runs = _runs([1.0, 9.0, 2.0], [4.0, 6.0], throughput=[2.0, 5.0])
    s = compare.Sample(runs, "x")
    # Pooled 1 2 4 6 9 → median 4; throughput mean (2 + 5)/2 = 3.5.
    assert s.estimate("fct_median_s") == 4.0 and s.estimate("throughput_exchanges_per_s") == 3.5
    assert s.estimate("retransmission_ratio") is None  # no exchange sums: not a UDP run of today


def test_one_replication_has_no_interval():
    a = compare.Sample(_runs([1.0, 2.0]), "a")
    b = compare.Sample(_runs([2.0, 3.0], [4.0, 5.0]), "b")
    d = compare.difference(a, b, ["fct_median_s"])["fct_median_s"]
    assert d["difference"] == 3.5 - 1.5 and d["low"] is None and d["high"] is None


# --------------------------------------------------------------------------- two studies, known by construction

#: One client with one request outstanding at a time and no link errors: nothing is ever lost
#: or queued behind another packet, so (i) the buffer size cannot matter (a ~100-byte message
#: never fills 2,500 bytes) and (ii) each exchange takes exactly one more uplink delay when the
#: uplink delay grows. Between 100 ms and 150 ms of uplink delay every replication's FCT
#: (5 exchanges, each one round trip later; the random gaps between them are drawn from the
#: same seeded streams) grows by 5 × 0.05 s = 0.25 s and the mean RTT by 0.05 s.
SHIFT_S = 5 * 0.050


@pytest.fixture(scope="module")
def studies(tmp_path_factory):
    from coaplab.execute.runner import run_scenario

    tmp = tmp_path_factory.mktemp("compare")
    for side, delay, buf in (("a", 100.0, 2500), ("b", 150.0, 1410000)):
        db = tmp / f"{side}.duckdb"
        run_scenario({"name": "shift", "replications": 5,
                      "link": {"errors": "none", "uplink_delay_ms": delay, "buffer_bytes": buf},
                      "workload": {"kind": "random", "clients": 1, "exchanges": 5}}, jobs=1, db=db)
        # Lossy, but one client: the buffer still never fills, so only the buffer differs and
        # every replication's result is the same at both sizes (difference 0 by construction).
        run_scenario({"name": "lossy", "replications": 5, "link": {"errors": "medium", "buffer_bytes": buf},
                      "workload": {"kind": "continuous", "clients": 1, "exchanges": 20}}, jobs=1, db=db)
        run_scenario({"name": f"only-{side}", "replications": 2, "workload": {"clients": 2, "exchanges": 3}},
                     jobs=1, db=db)
    return tmp


def test_compare_recovers_known_differences(studies):
    res = compare.compare_studies(studies / "a.duckdb", studies / "b.duckdb",
                                  ignore=["link.buffer_bytes", "link.uplink_delay_ms"])
    by = {m["name"]: m for m in res["matched"]}
    assert set(by) == {"shift", "lossy"}
    fct = by["shift"]["metrics"]["fct_median_s"]
    assert fct["difference"] == pytest.approx(SHIFT_S, abs=1e-9)
    assert fct["low"] <= SHIFT_S <= fct["high"] and fct["high"] - fct["low"] > 0  # replications do differ
    rtt = by["shift"]["metrics"]["mean_rtt_s"]
    assert rtt["difference"] == pytest.approx(0.050, abs=1e-9) and rtt["low"] <= 0.050 <= rtt["high"]
    # Five replications each, every B replication's FCT above every A one: U of A = 0, the
    # most extreme of C(10, 5) = 252 orderings; two-sided exact p = 2/252.
    assert fct["rank_test"] == {"u": 0.0, "p": pytest.approx(2 / 252), "method": "exact", "n": [5, 5]}
    for key, d in by["lossy"]["metrics"].items():
        assert d["difference"] == 0.0, key
        assert d["low"] <= 0.0 <= d["high"], key
    assert by["lossy"]["metrics"]["fct_median_s"]["high"] > 0  # a real interval, not a point
    # The configurations found in one study only are listed.
    assert [r["name"] for r in res["only_a"]] == ["only-a"]
    assert [r["name"] for r in res["only_b"]] == ["only-b"]


def test_compare_without_ignore_matches_nothing_and_lists_everything(studies):
    res = compare.compare_studies(studies / "a.duckdb", studies / "b.duckdb")
    # Buffers differ, so no configuration is the same: all three of each study are listed.
    assert res["matched"] == [] and len(res["only_a"]) == 3 and len(res["only_b"]) == 3


def test_compare_cli_table_and_json(cli, studies):
    args = ("compare", "--db", studies / "a.duckdb", "--db", studies / "b.duckdb",
            "--ignore", "link.buffer_bytes", "--ignore", "link.uplink_delay_ms")
    out = cli(*args)
    assert out.returncode == 0, out.stderr
    assert "only in A (1):" in out.stdout and "only-a" in out.stdout and "only-b" in out.stdout
    assert "median FCT (s)" in out.stdout and "2000 resamples" in out.stdout
    out = cli(*args, "--format", "json")
    rows = [json.loads(line) for line in out.stdout.splitlines()]
    kinds = sorted(r["kind"] for r in rows)
    assert kinds == ["match", "match", "only_a", "only_b"]
    shift = next(r for r in rows if r.get("name") == "shift" and r["kind"] == "match")
    assert shift["metrics"]["fct_median_s"]["difference"] == pytest.approx(SHIFT_S, abs=1e-9)


def test_model_version_is_not_part_of_the_match(studies, tmp_path):
    # The same study stored under another model version: its config ids change, the stored
    # configurations do not; every configuration still matches, with zero differences.
    import shutil

    import duckdb

    other = tmp_path / "other.duckdb"
    shutil.copy(studies / "a.duckdb", other)
    con = duckdb.connect(str(other))
    for (cid,) in con.execute("SELECT config_id FROM configs").fetchall():
        for table in ("configs", "runs", "clients"):
            con.execute(f"UPDATE {table} SET config_id = ? WHERE config_id = ?", [cid[::-1], cid])
    con.execute("UPDATE configs SET model_version = 'another'")
    con.close()
    res = compare.compare_studies(studies / "a.duckdb", other)
    assert len(res["matched"]) == 3 and not res["only_a"] and not res["only_b"]
    assert all(m["config_id_a"] != m["config_id_b"] for m in res["matched"])
    assert all(d["difference"] == 0.0 for m in res["matched"] for d in m["metrics"].values())


def test_report_of_two_databases(cli, studies, tmp_path):
    out = cli("report", "--db", studies / "a.duckdb", "--db", studies / "b.duckdb", "--ignore", "link.buffer_bytes",
              "--ignore", "link.uplink_delay_ms", "--out", tmp_path / "r")
    assert out.returncode == 0, out.stderr
    doc = (tmp_path / "r" / "index.html").read_text()
    for fid in ("side-by-side", "differences"):
        assert f'data-figure="{fid}"' in doc
    assert "whiskers: 95 % bootstrap CI over replications" in doc  # written on the figures
    assert "Only in A" in doc and "only-a" in doc and "only-b" in doc


# --------------------------------------------------------------------------- bad input: one line, exit 2


def test_compare_refuses_bad_input(cli, studies, tmp_path):
    a, b = studies / "a.duckdb", studies / "b.duckdb"
    (tmp_path / "junk.duckdb").write_bytes(b"not a database at all, just text")
    import duckdb

    duckdb.connect(str(tmp_path / "empty.duckdb")).close()  # a DuckDB file, but no coaplab tables
    cases = [
        (("compare", "--db", a), "compare takes exactly two"),
        (("compare", "--db", a, "--db", a), "is given twice"),
        (("compare", "--db", a, "--db", tmp_path / "junk.duckdb"), "is not a coaplab results database"),
        (("compare", "--db", a, "--db", tmp_path / "missing.duckdb"), "does not exist"),
        (("compare", "--db", tmp_path / "empty.duckdb", "--db", b), "is not a coaplab results database"),
        (("compare", "--db", a, "--db", b, "--ignore", "link.bufer_bytes"), "did you mean link.buffer_bytes"),
        (("compare", "--db", a, "--diff-by", "coap.ccc"), "did you mean coap.cc"),
        (("compare", "--db", a, "--db", b, "--diff-by", "coap.cc"), "--diff-by"),
        (("compare", "--db", a, "--db", b, "--ignore", "link.errors", "--ignore", "name",
          "--ignore", "workload.kind", "--ignore", "workload.exchanges", "--ignore", "replications",
          "--ignore", "workload.clients", "--ignore", "link.buffer_bytes"), "ignore fewer keys"),
        (("report", "--db", a, "--db", a, "--out", tmp_path / "o"), "is given twice"),
        (("report", "--db", a, "--diff-by", "coap.nope", "--out", tmp_path / "o"), "not a configuration key"),
    ]
    for args, words in cases:
        out = cli(*args)
        assert out.returncode == 2, (args, out.stderr)
        assert words in out.stderr and len(out.stderr.strip().splitlines()) == 1, (args, out.stderr)


def test_run_diff_by_unknown_key_runs_nothing(cli, tmp_path):
    scen = tmp_path / "s.toml"
    scen.write_text('name = "x"\nreplications = 2\n[workload]\nclients = 1\nexchanges = 2\n'
                    '[sweep]\n"coap.cc" = ["default", "cocoa"]\n')
    out = cli("run", scen, "--diff-by", "coap.c", "--db", tmp_path / "x.duckdb")
    assert out.returncode == 2 and "did you mean coap.cc" in out.stderr and len(out.stderr.splitlines()) == 1
    assert not (tmp_path / "x.duckdb").exists()


# --------------------------------------------------------------------------- within one study


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    from coaplab.execute.runner import run_scenario

    db = tmp_path_factory.mktemp("swept") / "s.duckdb"
    # The uplink delay swept over 100 / 150 / 250 ms with everything else as in `studies`:
    # known differences 0.25 s, 0.75 s and 0.5 s of median FCT (5 exchanges × 50, 150, 100 ms).
    run_scenario({"name": "delays", "replications": 4, "link": {"errors": "none"},
                  "workload": {"kind": "random", "clients": 1, "exchanges": 5},
                  "sweep": {"link.uplink_delay_ms": [100.0, 150.0, 250.0], "coap.cc": ["default", "cocoa"]}},
                 jobs=2, db=db)
    return db


def test_pairwise_differences_cover_known_shifts(swept):
    from coaplab.execute.tidy import load

    rows = compare.study_pairwise(load(swept), "link.uplink_delay_ms")
    # Two algorithms × three pairs of delays.
    assert len(rows) == 6 and {r["fixed"]["coap.cc"] for r in rows} == {"default", "cocoa"}
    for r in rows:
        known = 5 * (r["second"] - r["first"]) / 1000
        d = r["metrics"]["fct_median_s"]
        assert r["second"] > r["first"]
        assert d["difference"] == pytest.approx(known, abs=1e-9)
        assert d["low"] <= known <= d["high"]
        # Four replications each, every FCT of the larger delay above every FCT of the smaller
        # (the spread across replications is far below 0.25 s): U = 0, p = 2/C(8, 4) = 2/70.
        assert d["rank_test"]["u"] == 0.0 and d["rank_test"]["p"] == pytest.approx(2 / 70)
        assert set(r["metrics"]) == {"fct_median_s", "unnecessary_median", "throughput_exchanges_per_s"}


def test_run_diff_by_table_and_json(cli, tmp_path):
    scen = tmp_path / "s.toml"
    scen.write_text('name = "x"\nreplications = 3\n[link]\nerrors = "none"\n'
                    '[workload]\nkind = "random"\nclients = 1\nexchanges = 5\n'
                    '[sweep]\n"link.uplink_delay_ms" = [100.0, 150.0]\n')
    out = cli("run", scen, "--diff-by", "link.uplink_delay_ms", "--no-db", "--no-progress")
    assert out.returncode == 0, out.stderr
    assert "differences by link.uplink_delay_ms (second - first)" in out.stdout
    assert "100 -> 150" in out.stdout and "U=0 p=0.1 (exact)" in out.stdout  # 2/C(6, 3) = 0.1
    out = cli("run", scen, "--diff-by", "link.uplink_delay_ms", "--no-db", "--no-progress", "--format", "json")
    rows = [json.loads(line) for line in out.stdout.splitlines()]
    diffs = [r for r in rows if r.get("kind") == "difference"]
    assert len(rows) == 3 and len(diffs) == 1
    assert diffs[0]["metrics"]["fct_median_s"]["difference"] == pytest.approx(SHIFT_S, abs=1e-9)


def test_report_draws_differences_and_intervals(swept, tmp_path):
    from coaplab.present.report import build

    doc, ids = build(swept)  # default: coap.cc, which varies
    assert "median-ci-0" in ids and "differences-0" in ids
    assert 'data-table="differences-0"' in doc
    assert "markers: median; whiskers: 95 % bootstrap CI over replications" in doc
    doc, ids = build(swept, diff_by="link.uplink_delay_ms")
    assert "Differences by downlink" not in doc and "link.uplink_delay_ms" in doc


def test_resampled_median_equals_the_expanded_sample():
    # The binary search over cumulative counts against the definition: repeat each replication's
    # values as often as it was drawn, sort, take stats.percentile(·, 0.5).
    import random

    import numpy as np

    from coaplab.analyse.stats import percentile

    rnd = random.Random(3)
    per = [[rnd.choice([0.5, 1.0, 2.0, 3.25, 7.0]) for _ in range(rnd.randint(1, 5))] for _ in range(6)]
    s = compare.Sample(_runs(*per), "x")
    counts = np.array([[rnd.randint(0, 3) for _ in per] for _ in range(200)])
    counts[counts.sum(axis=1) == 0, 0] = 1
    got = s._stat("fct_median_s", counts)
    for row, value in zip(counts, got):
        expanded = sorted(v for c, vs in zip(row, per) for v in vs * int(c))
        assert value == percentile(expanded, 0.5)


def test_python_api():
    import coaplab

    res = coaplab.run({"name": "api", "replications": 2, "link": {"errors": "none"},
                       "workload": {"kind": "random", "clients": 1, "exchanges": 5},
                       "sweep": {"link.uplink_delay_ms": [100.0, 150.0]}}, jobs=1)
    (row,) = res.differences("link.uplink_delay_ms")
    assert row["name"] == "api" and (row["first"], row["second"]) == (100.0, 150.0)
    assert row["metrics"]["fct_median_s"]["difference"] == pytest.approx(SHIFT_S, abs=1e-9)
    assert coaplab.compare_studies is compare.compare_studies


def test_emulated_configurations_match_only_emulated_ones(studies, tmp_path):
    # crossval stores an emulated configuration with the simulated one's parameters under the
    # simulated id plus "-emu-<client>-<server>": it must not be taken for the simulation.
    import shutil

    import duckdb

    other = tmp_path / "emu.duckdb"
    shutil.copy(studies / "a.duckdb", other)
    con = duckdb.connect(str(other))
    (cid,) = con.execute("SELECT config_id FROM configs WHERE name = 'shift'").fetchone()
    emu = cid + "-emu-libcoap-coaplab"
    con.execute("INSERT INTO configs SELECT ?, name, 'emulated', config FROM configs WHERE config_id = ?", [emu, cid])
    con.execute("CREATE TEMP TABLE r AS SELECT * FROM runs WHERE config_id = ?", [cid])
    con.execute("UPDATE r SET config_id = ?", [emu])
    con.execute("INSERT INTO runs SELECT * FROM r")
    con.close()
    res = compare.compare_studies(studies / "a.duckdb", other)
    assert len(res["matched"]) == 3 and all(m["config_id_a"] == m["config_id_b"] for m in res["matched"])
    assert [r["config_id"] for r in res["only_b"]] == [emu] and not res["only_a"]


def test_plot_median_ci_says_what_the_whiskers_are(cli, swept, tmp_path):
    out = cli("plot", "--db", swept, "--kind", "median-ci", "--x", "link.uplink_delay_ms", "--out", tmp_path / "m.svg")
    assert out.returncode == 0, out.stderr
    svg = (tmp_path / "m.svg").read_text()
    assert "whiskers: 95 % bootstrap CI over replications" in svg
    # One marker with whiskers per configuration: 3 delays × 2 algorithms, each with an interval
    # (4 replications) drawn from the summary's replication statistics.
    from coaplab.execute.tidy import load

    sums = load(swept).summaries()
    fig = compare.median_intervals(sums, x="link.uplink_delay_ms")
    bars = [c for ax in fig.axes for c in ax.containers]
    assert len(bars) == 6 and all(b.has_yerr for b in bars)
    centres = sorted(float(b.lines[0].get_ydata()[0]) for b in bars)
    assert centres == sorted(s["fct_replications"]["median"]["estimate"] for s in sums)
