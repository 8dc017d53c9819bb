"""`coaplab reproduce cell-calibration` (docs/networks.md "Calibration"): the cell model's
published figures as verdicts. The verdict rules are checked with doctored simulated values
(never by changing the model); the target itself runs end to end."""

import json
import re

import pytest

from coaplab import _core
from coaplab.errors import CoaplabError
from coaplab.suites import cell_calibration as cc
from coaplab.suites.verdicts import MET, MISSED, NOT_SIMULATED, verdicts_text


def _fig(**kw):
    base = {"id": "f", "statement": "s", "published": 100.0, "unit": "ms",
            "measure": {"kind": "peak", "category": "nb1", "broadcast": False}}
    return {**base, **kw}


def test_a_figure_outside_its_spread_is_missed_and_inside_met():
    # spread 185–207 ms: published 196 ± 11, tolerance 11 / 196 = 0.0561. 185 and 207 ms are
    # on its edges (∓ 0.0561), 210 ms outside (+0.0714), 180 ms outside (−0.0816).
    (fig,) = cc.load_cell_figures('[[figure]]\nid = "f"\nstatement = "s"\nunit = "ms"\nspread = [185.0, 207.0]\n'
                                  'measure = { kind = "peak", category = "nb1", broadcast = false }\n')
    assert (fig["published"], fig["tolerance"]) == (196.0, pytest.approx(11 / 196))
    assert cc.verdict_row(fig, 185.0)["verdict"] == MET
    assert cc.verdict_row(fig, 200.0)["verdict"] == MET
    assert cc.verdict_row(fig, 207.0)["verdict"] == MET
    assert cc.verdict_row(fig, 210.0)["verdict"] == MISSED
    assert cc.verdict_row(fig, 180.0)["verdict"] == MISSED
    assert cc.verdict_row(fig, None)["verdict"] == NOT_SIMULATED
    assert cc.verdict_row(fig, 210.0)["diff"] == pytest.approx(210 / 196 - 1)


def test_bounds_are_one_sided():
    at_most = _fig(published=10000.0, bound="at most")
    assert cc.verdict_row(at_most, 9700.0)["verdict"] == MET
    assert cc.verdict_row(at_most, 10000.0)["verdict"] == MET
    assert cc.verdict_row(at_most, 10001.0)["verdict"] == MISSED
    at_least = _fig(published=10.0, bound="at least", unit="years")
    assert cc.verdict_row(at_least, 12.0)["verdict"] == MET
    assert cc.verdict_row(at_least, 2.16)["verdict"] == MISSED
    text = verdicts_text([cc.verdict_row(at_least, 2.16)])
    assert "at least" in text and "missed" in text and "0 of 1 figures within tolerance" in text


def test_doctored_values_turn_every_shipped_verdict():
    # Every shipped figure at its published value is met (a tolerance of 0 and both bounds
    # include it); at 1.5 × it every tolerance and "at most" figure is missed, every "at
    # least" one met; at 0.5 × the reverse for the bounds.
    figures = cc.load_cell_figures()
    assert len(figures) >= 8
    rows = cc.cell_calibration_rows(figures=figures, measure=lambda f: float(f["published"]))
    assert all(r["verdict"] == MET for r in rows)
    high = cc.cell_calibration_rows(figures=figures, measure=lambda f: 1.5 * f["published"])
    low = cc.cell_calibration_rows(figures=figures, measure=lambda f: 0.5 * f["published"])
    for f, h, lo in zip(figures, high, low):
        if f.get("bound") == "at least":
            assert (h["verdict"], lo["verdict"]) == (MET, MISSED)
        elif f.get("bound") == "at most":
            assert (h["verdict"], lo["verdict"]) == (MISSED, MET)
        else:
            assert (h["verdict"], lo["verdict"]) == (MISSED, MISSED)


def test_every_figure_names_its_source_and_rule():
    for f in cc.load_cell_figures():
        assert f["source"] and f["statement"] and f["unit"]
        assert (f.get("tolerance") is None) != (f.get("bound") is None), f["id"]


def test_bad_figure_files_are_refused_in_one_line():
    bad = '[[figure]]\nid = "x"\npublished = 1.0\nmeasure = { kind = "guess" }\n'
    with pytest.raises(CoaplabError, match="measure kind 'guess'; allowed: peak, rtt, report, battery"):
        cc.load_cell_figures(bad)
    bad = '[[figure]]\nid = "x"\npublished = 1.0\nbound = "about"\nmeasure = { kind = "peak" }\n'
    with pytest.raises(CoaplabError, match="bound 'about'; allowed: at most, at least"):
        cc.load_cell_figures(bad)
    bad = '[[figure]]\nid = "x"\nspread = [600.0, 500.0]\nmeasure = { kind = "peak" }\n'
    with pytest.raises(CoaplabError, match=r"spread \[600.0, 500.0\]; allowed: \[low, high\] with 0 < low <= high"):
        cc.load_cell_figures(bad)


def test_nearest_rank_percentile():
    # 1..200: the 99th percentile by nearest rank is the value of rank ceil(0.99 × 200) = 198.
    assert cc.percentile([float(v) for v in range(200, 0, -1)], 99) == 198.0
    assert cc.percentile([5.0], 99) == 5.0


def test_the_engine_figures_and_their_bad_input():
    # TS 36.213 timing without broadcast subframes: 680 bits / 26 ms (docs/networks.md).
    assert _core.cell_peak_downlink_kbps("nb1", False) == pytest.approx(680 / 26)
    with pytest.raises(ValueError, match='cell category: unknown "nb3"; allowed: nb1, nb2, m1'):
        _core.cell_peak_downlink_kbps("nb3", True)
    with pytest.raises(ValueError, match="not a cell; allowed: nbiot, ltem"):
        _core.cell_report_latency_ms(json.dumps({"kind": "star"}), 81, 0)
    with pytest.raises(ValueError, match="beyond the reach"):
        _core.cell_report_latency_ms(json.dumps({"kind": "nbiot", "coupling_loss_db": 170.0}), 81, 0)


def test_the_target_prints_a_verdict_per_figure(cli):
    out = cli("reproduce", "cell-calibration", "--no-db", "--no-progress")
    assert out.returncode == 0, out.stderr
    for f in cc.load_cell_figures():
        assert re.search(rf"^\s+{re.escape(f['id'])}\s.*\s(met|missed)\s", out.stdout, re.MULTILINE), f["id"]
    # The bare timing's peak meets its figure.
    assert re.search(r"^\s+nb1-downlink-peak\s.*26\.154.*\smet\s", out.stdout, re.MULTILINE)


def test_the_battery_presets_print_their_verdict(cli):
    # TR 45.820's evaluation of the 10-year target on its own preset: the verdict row first.
    out = cli("reproduce", "nbiot-battery-164-tr45820", "--no-db", "--no-progress")
    assert out.returncode == 0, out.stderr
    assert re.search(r"^\s+battery-164-tr45820\s.*\sat least\s+(met|missed)\s+years$", out.stdout, re.MULTILINE)
    # A doctored summary: 12 years meets the target, 4 misses it.
    rows = cc.battery_rows("nbiot-battery-164-tr45820", [{"energy": {"battery_life_years": 12.0}},
                                                        {"energy": {"battery_life_years": 4.0}}])
    assert [r["verdict"] for r in rows] == [MET, MISSED]
    assert cc.battery_rows("udp-1client-continuous", [{"energy": None}]) == []


def test_the_peak_without_sib1_nb_is_the_hand_derivation():
    # NB2 on the anchor with NPBCH, NPSS and NSSS only (TS 36.213 §16.4): three 2536-bit blocks
    # from subframe 0 end at 105 ms (by hand, subframe by subframe, in crates/engine/src/net/
    # cellular/tests.rs nb2_peak_without_sib1_nb_is_the_published_72_kbps): 7608 / 105 kbit/s.
    assert _core.cell_peak_downlink_kbps("nb2", True, 3, sib1=False) == pytest.approx(3 * 2536 / 105)
    # With SIB1-NB's subframes (the default) the same three blocks take longer.
    assert _core.cell_peak_downlink_kbps("nb2", True, 3) < 3 * 2536 / 105
    bad = '[[figure]]\nid = "x"\npublished = 1.0\nmeasure = { kind = "peak", category = "nb1", broadcast = true, sib1 = "no" }\n'
    with pytest.raises(CoaplabError, match="sib1 'no'; allowed: true, false"):
        cc.load_cell_figures(bad)
