"""Figures (coaplab.present.figures): what is drawn is what the summaries say, every configuration is told
apart by what varies, and the figures meet a paper's needs (sizes, fonts, colours)."""

import matplotlib.colors as mcolors
import pytest

from coaplab.describe.scenario import resolve
from coaplab.errors import CoaplabError
from coaplab.present import figures, traces


def summary(fct, hist=(10, 0), unnecessary=None, groups=None, **config):
    """A hand-made summary: `fct` = (p10, p25, p50, p75, p90); config keys as dotted overrides."""
    raw = {}
    for key, value in config.items():
        section, name = key.split("__")
        raw.setdefault(section, {})[name] = value
    p10, p25, p50, p75, p90 = fct
    pct = {"min": p10 - 1, "p10": p10, "p25": p25, "p50": p50, "p75": p75, "p90": p90, "p95": p90 + 1, "max": p90 + 2}
    un = unnecessary or {k: 0.0 for k in pct}
    s = {"config": resolve(raw), "fct_s": pct, "unnecessary_retransmissions_per_client": un,
         "retransmission_histogram": list(hist)}
    if groups:
        s["groups"] = groups
    return s


def nstart_sweep():
    # The user's case: algorithm × NSTART at one buffer. Values chosen so that every box differs.
    return [summary((1 + i, 2 + i, 3 + i, 4 + i, 5 + i), coap__cc=cc, coap__nstart=n)
            for i, (cc, n) in enumerate([("cocoa", 1), ("cocoa", 2), ("default", 1), ("default", 2)])]


def texts(fig):
    return [t for t in fig.findobj(lambda a: hasattr(a, "get_text") and hasattr(a, "get_fontsize")) if t.get_text()]


def test_box_plot_draws_the_summary_percentiles():
    s = [summary((10.0, 12.0, 15.0, 17.0, 30.0), coap__cc="cocoa")]
    fig = figures.fct_boxes(s)
    ax = fig.axes[0]
    # One box: whiskers p10/p90 (10, 30), box p25..p75 (12..17), median 15.
    ys = sorted({round(y, 9) for line in ax.lines for y in line.get_ydata()})
    assert ys == [10.0, 12.0, 15.0, 17.0, 30.0]
    assert ax.get_ylabel() == "flow completion time (s)\n(box p25–p75, whiskers p10–p90)"


def test_every_configuration_is_told_apart_by_what_varies():
    fig = figures.fct_boxes(nstart_sweep())
    # Default layout: colour = algorithm; NSTART (no buffer sweep) on the x axis.
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["1", "2"]
    assert ax.get_xlabel() == "NSTART"
    legend = fig.legends[0]
    assert [t.get_text() for t in legend.get_texts()] == ["cocoa", "default"]
    assert legend.get_title().get_text() == "algorithm"
    # Four distinct medians (3, 4, 5, 6), one per configuration.
    medians = sorted(line.get_ydata()[0] for line in ax.lines if line.get_gid() == "median")
    assert medians == [3.0, 4.0, 5.0, 6.0]


def test_explicit_layout_and_leftover_keys():
    s = [summary((1, 2, 3, 4, 5), coap__cc=cc, coap__nstart=n, link__buffer_bytes=b)
         for cc in ("cocoa", "fasor") for n in (1, 2) for b in (2500, 28200)]
    fig = figures.fct_boxes(s, x="link.buffer_bytes", hue="coap.cc", col="coap.nstart")
    visible = [ax for ax in fig.axes if ax.get_visible()]
    assert [ax.get_title() for ax in visible] == ["NSTART = 1", "NSTART = 2"]
    assert [t.get_text() for t in visible[0].get_xticklabels()] == ["2,500", "28,200"]
    # Not placing NSTART: it still splits the figure (into panels), never merges boxes.
    fig = figures.fct_boxes(s, x="link.buffer_bytes", hue="coap.cc")
    assert [ax.get_title() for ax in fig.axes if ax.get_visible()] == ["NSTART = 1", "NSTART = 2"]
    # With a column key given, the leftover key joins the colours.
    fig = figures.fct_boxes(s, x="link.buffer_bytes", col="coap.cc")
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["1", "2"]  # hue = nstart (auto)
    with pytest.raises(CoaplabError, match="--hue: 'coap.nope' is not a configuration key"):
        figures.fct_boxes(s, hue="coap.nope")


def test_groups_as_a_key_and_absent_groups():
    sub = lambda m: {"fct_s": {"p10": m - 2, "p25": m - 1, "p50": m, "p75": m + 1, "p90": m + 2}}
    s = [summary((1, 2, 3, 4, 5), coap__cc="cocoa", groups={"sensors": sub(10.0), "firmware": sub(20.0)}),
         summary((1, 2, 3, 4, 5), coap__cc="fasor")]  # no groups: one group named "all"
    fig = figures.fct_boxes(s, x="group", hue="coap.cc")
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["sensors", "firmware", "all"]
    medians = sorted(line.get_ydata()[0] for line in ax.lines if line.get_gid() == "median")
    assert medians == [3.0, 10.0, 20.0]


def test_histogram_shares():
    # 6 exchanges with 0, 3 with 1, 1 with 7 retransmissions → 60 %, 30 %, 0, 0, 0, 10 % (≥ 5).
    s = [summary((1, 2, 3, 4, 5), hist=(6, 3, 0, 0, 0, 0, 0, 1), coap__cc="cocoa")]
    fig = figures.retransmission_histogram(s)
    heights = [round(p.get_height(), 9) for p in fig.axes[0].patches]
    assert heights == [60.0, 30.0, 0.0, 0.0, 0.0, 10.0]
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()][-1] == "≥5"


def test_time_sequence_draws_retransmissions_on_top_of_the_ack_line():
    pts = [{"time_s": 0.0, "event": "send", "seq": 0, "length": 256},
           {"time_s": 0.1, "event": "drop", "seq": 0, "length": 256},
           {"time_s": 0.5, "event": "ack", "seq": 0, "length": 0},
           {"time_s": 2.0, "event": "retransmit", "seq": 0, "length": 256},
           {"time_s": 2.4, "event": "ack", "seq": 256, "length": 0}]
    fig = traces.time_sequence(pts)
    ax = fig.axes[0]
    z = {a.get_gid(): a.get_zorder() for a in ax.get_children() if a.get_gid()}
    assert z["send"] < z["ack"] < z["retransmit"] < z["drop"]
    assert ax.get_xlabel() == "time (s)" and ax.get_ylabel() == "sequence number (kB)"
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["sent (1)", "retransmitted (1)", "dropped (1)",
                                                                  "cumulative ACK"]


def test_rto_trace():
    pts = [{"time_s": 0.0, "timer_s": 2.2, "rto_s": 2.0, "sample_s": None, "sample_kind": "none"},
           {"time_s": 0.7, "timer_s": 1.3, "rto_s": 1.1, "sample_s": 0.7, "sample_kind": "strong"}]
    fig = traces.rto_trace(pts)
    ax = fig.axes[0]
    assert ax.get_xlabel() == "time (s)" and ax.get_ylim()[0] == 0
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["armed timer", "RTO estimate", "strong RTT sample"]


@pytest.mark.parametrize("width, inches", [("one", 3.5), ("two", 7.16)])
def test_paper_sizes_fonts_and_palette(width, inches, tmp_path):
    fig = figures.fct_boxes(nstart_sweep(), width=width)
    assert fig.get_figwidth() == pytest.approx(inches)
    assert all(t.get_fontsize() >= 8 for t in texts(fig))
    # Okabe–Ito (Okabe & Ito 2008): the first colours are blue #0072B2 and orange #E69F00.
    faces = [mcolors.to_hex(p.get_facecolor()).upper() for p in fig.axes[0].patches]
    assert set(faces) == {"#0072B2", "#E69F00"}
    for ext, magic in (("png", b"\x89PNG"), ("pdf", b"%PDF"), ("svg", b"<?xml")):
        path = fig.save(tmp_path / f"f.{ext}")
        assert path.read_bytes().startswith(magic)
    with pytest.raises(CoaplabError, match="allowed: .png, .pdf, .svg"):
        fig.save(tmp_path / "f.jpg")
    assert "flow completion time (s)" in fig.to_svg()  # SVG text stays text


def test_a_key_implied_by_the_placed_ones_does_not_split():
    # coap.cc is implied by coap.transport here (udp → cocoa, tcp → newreno): colour by
    # transport gives one panel, not one per algorithm.
    s = [summary((1, 2, 3, 4, 5), coap__transport="udp", coap__cc="cocoa", link__buffer_bytes=2500),
         summary((2, 3, 4, 5, 6), coap__transport="tcp", coap__cc="newreno", link__buffer_bytes=2500),
         summary((1, 2, 3, 4, 5), coap__transport="udp", coap__cc="cocoa", link__buffer_bytes=14100),
         summary((2, 3, 4, 5, 6), coap__transport="tcp", coap__cc="newreno", link__buffer_bytes=14100)]
    fig = figures.fct_boxes(s, hue="coap.transport")
    assert len([ax for ax in fig.axes if ax.get_visible()]) == 1
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["udp", "tcp"]


def test_legend_reads_row_by_row():
    algos = ["default", "default-fb1", "default-fb2", "cocoa", "cocoa-fb1", "cocoa-fb2", "fasor"]
    s = [summary((1, 2, 3, 4, 5), coap__cc=a) for a in algos]
    fig = figures.fct_boxes(s, width="two")
    legend = fig.legends[0]
    # 7 entries in rows of 6: matplotlib fills columns first, so the stored order is the
    # transpose (column 1: default, fasor; column 2: default-fb1, blank; ...).
    assert [t.get_text() for t in legend.get_texts()] == [
        "default", "fasor", "default-fb1", "", "default-fb2", "", "cocoa", "", "cocoa-fb1", "", "cocoa-fb2", ""]


def test_more_series_than_colours_get_hatches():
    # 12 algorithms, 7 fill colours: the 8th to 12th repeat the colours with hatching, so no
    # two boxes look alike.
    algos = ["default", "default-fb1", "default-fb2", "cocoa", "cocoa-s", "cocoa-fb1", "cocoa-fb2",
             "basic-rto", "linux-rto", "peakhopper-rto", "fasor", "fasor-rc"]
    fig = figures.fct_boxes([summary((1, 2, 3, 4, 5), coap__cc=a) for a in algos])
    looks = [(mcolors.to_hex(p.get_facecolor()), p.get_hatch() or "") for p in fig.axes[0].patches]
    assert len(set(looks)) == 12
    assert looks[7] == (looks[0][0], "////")


def test_load_curves_on_a_mesh(tmp_path, cli):
    # The Cooja study's figure type: carried vs offered load per algorithm on a mesh, from the
    # CLI; and MAC drops vs offered load. A short chain sweep over two periods.
    import coaplab

    db = tmp_path / "mesh.duckdb"
    scen = {"name": "mesh", "replications": 1, "network": {"kind": "chain"},
            "workload": {"kind": "periodic", "clients": 20, "duration_s": 60.0, "request_bytes": 95,
                         "response_bytes": 0},
            "coap": {"max_retransmit": 4},
            "sweep": {"coap.cc": ["default", "cocoa"], "workload.period_s": [4.0, 1.0],
                      "network.mac": ["ieee802154", "contiki"]}}
    res = coaplab.run(scen, jobs=2, db=db)
    loads = sorted(s["mesh"]["offered_kbps"] for s in res.summaries)
    assert loads[0] < loads[-1]  # the period sweep moves the offered load
    for kind in ("load", "mac-drops", "drop-causes"):
        out = cli("plot", "--db", db, "--kind", kind, "--out", tmp_path / f"{kind}.png")
        assert out.returncode == 0, out.stderr
        assert (tmp_path / f"{kind}.png").stat().st_size > 10_000
    bad = cli("plot", "--db", db, "--kind", "load", "--x", "coap.cc", "--out", tmp_path / "x.png")
    assert bad.returncode == 2 and "not for --kind load" in bad.stderr and "Traceback" not in bad.stderr


def test_mac_drops_with_all_zero_data_start_at_zero():
    # No MAC queue drops anywhere: the y axis runs from 0 (a count is never negative), not
    # matplotlib's -0.04 to 0.04 around a constant.
    s = [{**summary((1, 2, 3, 4, 5), coap__cc=cc, network__kind="chain"), "replications": 1,
          "mesh": {"offered_kbps": load, "carried_kbps": load, "mac_queue_drops": 0}}
         for cc in ("default", "cocoa") for load in (1.0, 2.0)]
    fig = figures.load_curves(s, "mac_queue_drops")
    lo, hi = fig.axes[0].get_ylim()
    assert lo == 0 and hi > 0
    # Carried load too starts at 0.
    assert figures.load_curves(s, "carried_kbps").axes[0].get_ylim()[0] == 0
