"""`coaplab reproduce` on the built-in experiments."""

import re

from coaplab.reproduce import COMPARISONS, available, load


def test_list_names_every_shipped_experiment(cli):
    out = cli("reproduce", "--list")
    assert out.returncode == 0
    for name in ("udp-1client-continuous", "udp-50clients-continuous", "udp-continuous-matrix", "firmware"):
        assert name in out.stdout


def test_every_builtin_scenario_is_valid():
    for name in available():
        for part in COMPARISONS[name][1] if name in COMPARISONS else (name,):
            assert load(part).configurations()


def test_comparisons_pair_udp_with_tcp():
    for _, parts in COMPARISONS.values():
        transports = {load(p).configurations()[0]["coap"]["transport"] for p in parts}
        assert transports == {"udp", "tcp"}


def test_reproduce_prints_published_vs_simulated(cli):
    out = cli("reproduce", "udp-1client-continuous", "--no-db")
    assert out.returncode == 0, out.stderr
    # Both algorithms, each with published, simulated and the relative difference per statistic.
    assert out.stdout.count("udp-1client-continuous [") == 2
    rows = re.findall(r"^\s+(p\d\d)\s+([\d.]+)\s+([\d.]+)\s+([+-][\d.]+)%$", out.stdout, re.M)
    assert len(rows) == 10
    for _, pub, sim, diff in rows:
        assert abs((float(sim) / float(pub) - 1) * 100 - float(diff)) < 0.006
        assert abs(float(diff)) < 0.2


def test_unknown_experiment(cli):
    out = cli("reproduce", "nope", "--no-db")
    assert out.returncode == 2 and "unknown experiment 'nope'; available:" in out.stderr


def test_reproduce_400_client_histograms(cli):
    out = cli("reproduce", "udp-400clients-histogram", "--no-db")
    assert out.returncode == 0, out.stderr
    # Four rows (default/cocoa × continuous/random), each published vs simulated with its TV distance.
    for row in ("default/continuous", "cocoa/continuous", "default/random", "cocoa/random"):
        assert f"retx-hist-400-infinite [{row}]" in out.stdout
    tvs = [float(x) for x in re.findall(r"total-variation distance ([\d.]+)$", out.stdout, re.M)]
    assert len(tvs) == 4 and all(0 <= t <= 1 for t in tvs)
