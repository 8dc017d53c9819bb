"""`coaplab reproduce` on the built-in experiments."""

import re

from coaplab.suites import cell_calibration, nstart
from coaplab.suites.reproduce import COMPARISONS, available, load


def test_list_names_every_shipped_experiment(cli):
    out = cli("reproduce", "--list")
    assert out.returncode == 0
    for name in ("udp-1client-continuous", "udp-50clients-continuous", "udp-continuous-matrix", "firmware"):
        assert name in out.stdout


def test_every_builtin_scenario_is_valid():
    for name in available():
        if name == cell_calibration.TARGET:  # computed figures (tests/test_cell_calibration.py), no file
            continue
        for part in COMPARISONS[name][1] if name in COMPARISONS else (name,):
            assert load(part).configurations()


def test_comparisons_pair_udp_with_tcp_or_are_the_nstart_study():
    """A comparison runs several scenario files: UDP beside TCP (they cannot share a sweep), or
    the NSTART study's networks (docs/validation.md "NSTART"), all over UDP."""
    for name, (_, parts) in COMPARISONS.items():
        transports = {load(p).configurations()[0]["coap"]["transport"] for p in parts}
        if name == "nstart":
            assert parts == nstart.PARTS and transports == {"udp"}
        else:
            assert transports == {"udp", "tcp"}


def test_reproduce_prints_published_vs_simulated(cli):
    out = cli("reproduce", "udp-1client-continuous", "--no-db", "--details")
    assert out.returncode == 0, out.stderr
    # Both algorithms, each with published, simulated and the relative difference per statistic.
    assert out.stdout.count("udp-1client-continuous [") == 2
    rows = re.findall(r"^\s+(p\d\d)\s+([\d.]+)\s+([\d.]+)\s+([+-][\d.]+)%$", out.stdout, re.MULTILINE)
    assert len(rows) == 10
    for _, pub, sim, diff in rows:
        assert abs((float(sim) / float(pub) - 1) * 100 - float(diff)) < 0.006
        assert abs(float(diff)) < 0.2


def test_unknown_experiment(cli):
    out = cli("reproduce", "nope", "--no-db")
    assert out.returncode == 2 and "unknown experiment 'nope'; available:" in out.stderr


def test_reproduce_400_client_histograms(cli):
    out = cli("reproduce", "udp-400clients-histogram", "--no-db", "--details")
    assert out.returncode == 0, out.stderr
    # Four rows (default/cocoa × continuous/random), each published vs simulated with its TV distance.
    for row in ("default/continuous", "cocoa/continuous", "default/random", "cocoa/random"):
        assert f"retx-hist-400-infinite [{row}]" in out.stdout
    tvs = [float(x) for x in re.findall(r"total-variation distance ([\d.]+)$", out.stdout, re.MULTILINE)]
    assert len(tvs) == 4 and all(0 <= t <= 1 for t in tvs)
    # The verdicts first: the same four distances against the tolerance of published.toml (≤ 0.10).
    verdicts = out.stdout.split("== udp-400clients-histogram: details ==")[0]
    rows = re.findall(r"retx-hist-400-infinite\s+(\S+)\s+TV distance\s+[\d. /]+?\s{2,}[\d. /]+?\s{2,}([\d.]+)\s+"
                      r"≤ 0\.10\s+(met|missed)", verdicts)
    assert [(r, float(tv)) for r, tv, _ in rows] == [(r, t) for r, t in zip([r for r, _, _ in rows], tvs)]
    assert all((v == "met") == (float(tv) <= 0.10) for _, tv, v in rows) and len(rows) == 4


def test_targets_without_a_published_figure_print_the_study_metrics():
    from coaplab.suites.reproduce import study_metric_lines

    s = {"throughput_exchanges_per_s": 14.254, "retransmission_ratio": 0.02345, "mean_rtt_s": 0.6754,
         "mean_rtt_weak_s": None, "mean_initial_rto_s": 1.5891, "jain_fairness": 0.98765,
         "settling_time_s": 116.04, "settled_replications": 13, "replications": 15}
    assert study_metric_lines(s) == [
        ("  throughput 14.25 exch/s, retransmission ratio 0.023, mean RTT 675 ms (weak -), mean initial RTO"
        " 1589 ms, Jain 0.988, settling 116.0 s (2 of 15 replications not settled by the cap)")]
    # TCP summaries carry no such metrics: nothing is printed.
    assert study_metric_lines({"retransmission_ratio": None}) == []
