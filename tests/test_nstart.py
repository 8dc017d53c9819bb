"""The NSTART study's arithmetic (`coaplab reproduce nstart`, docs/validation.md "NSTART"):
goodput ratios, their intervals and the collapse rule, on made-up results computed by hand."""

import pytest

from coaplab.analyse.intervals import ratio_of_means_interval
from coaplab.suites import nstart


def _summary(cc, n, goodput, unnecessary=0, done=100):
    return {"name": "nstart-star", "config_id": f"{cc}-{n}", "swept": {"coap.cc": cc, "coap.nstart": n},
            "config": {"coap": {"cc": cc, "nstart": n}}, "throughput_exchanges_per_s": goodput,
            "unnecessary_retransmissions_total": unnecessary, "exchanges_completed": done}


def test_the_collapse_rule_by_hand():
    """Algorithm a: NSTART 1 goodput 10 (replications 10, 10); NSTART 2: 9.8, 9.8 → 0.98, inside
    the 5 % margin; NSTART 4: 9.0, 9.0 → 0.90, every resample 0.90 < 0.95: unsafe from 4.
    Algorithm b: NSTART 2's replications 9.0 and 10.6 (mean 9.8) — resamples reach 10.6 / 10 =
    1.06, so the interval's top is above 0.95: not unsafe, although the mean is 0.98."""
    runs = {"a-1": [{"throughput_exchanges_per_s": 10.0}] * 2, "a-2": [{"throughput_exchanges_per_s": 9.8}] * 2,
            "a-4": [{"throughput_exchanges_per_s": 9.0}] * 2,
            "b-1": [{"throughput_exchanges_per_s": 10.0}] * 2,
            "b-2": [{"throughput_exchanges_per_s": 9.0}, {"throughput_exchanges_per_s": 10.6}]}
    summaries = [_summary("a", 1, 10.0), _summary("a", 2, 9.8), _summary("a", 4, 9.0, unnecessary=50),
                 _summary("b", 1, 10.0), _summary("b", 2, 9.8)]
    rows = {r["coap.cc"]: r for r in nstart.rows(summaries, runs)}
    a, b = rows["a"], rows["b"]
    assert a["relative_2"] == pytest.approx(0.98) and a["relative_4"] == pytest.approx(0.9)
    assert a["unsafe_from"] == 4 and a["unnecessary_per_exchange_4"] == pytest.approx(0.5)
    assert b["unsafe_from"] is None
    assert b["relative_2_ci"][1] == pytest.approx(1.06)
    assert "unsafe from" in nstart.text(summaries, runs)


def test_ratio_of_means_interval_by_hand():
    # Constant replications: every resample gives 3 / 4 = 0.75.
    assert ratio_of_means_interval([3.0, 3.0, 3.0], [4.0, 4.0]) == pytest.approx((0.75, 0.75))
    # Numerator 1 or 3 (2 values): resampled means 1, 2 or 3 → ratios 0.5 … 1.5 over 2.
    low, high = ratio_of_means_interval([1.0, 3.0], [2.0, 2.0])
    assert (low, high) == pytest.approx((0.5, 1.5))
    assert ratio_of_means_interval([1.0], [2.0, 2.0]) is None


def test_the_study_sweeps_every_built_in_algorithm():
    from coaplab import _core
    for part in nstart.PARTS:
        s = nstart.scenario(part)
        assert s.sweep["coap.cc"] == list(_core.algorithms())
        assert s.sweep["coap.nstart"] == list(nstart.NSTARTS)


def test_the_cell_parts_build_cell_scenarios():
    """The NB-IoT and LTE-M parts run on a cell (docs/networks.md "NB-IoT and LTE-M cells"), at
    the coverage of the cell study's files (cell-study-400-udp.toml, cell-study-400-ltem-udp.toml):
    NB-IoT 120–144 dB, of which (139.2 − 120) / 24 = 80 % below level 1's 139.2 dB (RSRP
    32.2 dBm − loss ≥ −107 dBm); LTE-M 110–128 dB, (125.2 − 110) / 18 = 84 % below 125.2 dB
    (18.2 dBm − loss ≥ −107 dBm). Continuous clients, as on the star and GPRS."""
    assert {"nstart-nbiot", "nstart-ltem"} <= set(nstart.PARTS)
    for part, kind, (low, high) in (("nstart-nbiot", "nbiot", (120.0, 144.0)),
                                    ("nstart-ltem", "ltem", (110.0, 128.0))):
        s = nstart.scenario(part)
        configs = list(s.iter_configurations())
        # 17 built-in algorithms × 4 NSTART values, each configuration on the cell.
        assert len(configs) == len(s.sweep["coap.cc"]) * 4
        for c in configs:
            assert c["network"]["kind"] == kind
            assert c["network"]["coupling_loss_db"] == {"distribution": "uniform", "low": low, "high": high}
            assert c["workload"]["kind"] == "continuous"
            assert c["coap"]["transport"] == "udp"
        assert sorted({c["coap"]["nstart"] for c in configs}) == [1, 2, 4, 8]


def _cell_summary(cc, n, goodput, uplink, done=500):
    return {**_summary(cc, n, goodput, unnecessary=uplink - done, done=done), "name": "nstart-nbiot",
            "cell": {"uplink_packets": uplink, "ra_attempts": 0}}


def test_a_cell_verdict_flips_with_doctored_figures():
    """The same rule on a cell: NSTART 1 goodput 20 (replications 20, 20). NSTART 4 at 19.2 →
    0.96, inside the 5 % margin: safe; doctored to 18.8 → 0.94 < 0.95 with every resample (the
    replications are constant): unsafe from 4. The uplink column: 500 exchanges, 500 uplink
    packets at NSTART 1 → 1.00 per exchange; 1 000 at NSTART 4 → 2.00 (one copy each)."""
    def table(g4):
        runs = {"c-1": [{"throughput_exchanges_per_s": 20.0}] * 2, "c-4": [{"throughput_exchanges_per_s": g4}] * 2}
        summaries = [_cell_summary("c", 1, 20.0, 500), _cell_summary("c", 4, g4, 1000)]
        return nstart.rows(summaries, runs)[0], nstart.text(summaries, runs)

    safe, safe_text = table(19.2)
    assert safe["relative_4"] == pytest.approx(0.96) and safe["unsafe_from"] is None
    assert safe["uplink_per_exchange_1"] == pytest.approx(1.0) and safe["uplink_per_exchange_4"] == pytest.approx(2.0)
    assert safe["unnecessary_per_exchange_4"] == pytest.approx(1.0)
    unsafe, _ = table(18.8)
    assert unsafe["relative_4"] == pytest.approx(0.94) and unsafe["unsafe_from"] == 4
    assert "uplink packets/exch" in safe_text and "1.00 → -" in safe_text  # NSTART 8 not run here


def test_the_star_table_has_no_cell_column():
    """A summary without `cell` (the star) adds no uplink figure and no column."""
    runs = {"a-1": [{"throughput_exchanges_per_s": 10.0}] * 2}
    summaries = [_summary("a", 1, 10.0)]
    assert "uplink_per_exchange_1" not in nstart.rows(summaries, runs)[0]
    assert "uplink packets/exch" not in nstart.text(summaries, runs)


def test_a_summary_without_nstart_1_gives_no_row():
    """Bad input: without NSTART 1 there is nothing to compare with — no row, no verdict."""
    assert nstart.rows([_cell_summary("c", 4, 18.8, 1000)], {}) == []
