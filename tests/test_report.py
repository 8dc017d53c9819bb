"""`coaplab report`: rendered in headless Chromium; every figure present; a screenshot is kept
as a test artefact (artifacts/report.png)."""

import os
import re
import shutil
import subprocess

import pytest

import coaplab
from conftest import ROOT

CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def _chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    if os.environ.get("CI"):
        pytest.fail("chromium is required in CI (scripts/test.sh installs Debian's chromium as root)")
    pytest.skip("chromium not installed")


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    from coaplab.execute.runner import run_scenario
    from coaplab.present.report import build, write

    tmp = tmp_path_factory.mktemp("report")
    db = tmp / "r.duckdb"
    run_scenario({"name": "fig", "replications": 3, "link": {"errors": "medium"},
                  "workload": {"clients": 6, "exchanges": 10},
                  "sweep": {"coap.cc": ["default", "cocoa", "fasor"], "link.buffer_bytes": [2500, 1410000]}},
                 jobs=2, db=db, trace=True)
    run_scenario({"name": "other", "replications": 2, "workload": {"kind": "random", "clients": 4, "exchanges": 6},
                  "sweep": {"coap.cc": ["cocoa-fb2", "linux-rto"]}}, jobs=2, db=db)
    _, ids = build(db)
    return tmp, db, write(db, tmp / "out"), ids


def test_report_has_every_figure(report):
    _, _, path, ids = report
    doc = path.read_text()
    # 2 scenarios × (FCT, unnecessary, histogram); the 6 traced configurations of "fig" one
    # RTO trace figure each (none is left out).
    assert sum(i.startswith("fct-") for i in ids) == 2
    assert sum(i.startswith("histogram-") for i in ids) == 2
    assert sum(i.startswith("trace-") for i in ids) == 6
    for fid in ids:
        assert f'data-figure="{fid}"' in doc
    # Per scenario a configuration table, then the list of every traced configuration with its
    # replications (0–2) and clients (0–5), each row linking to its figure.
    assert doc.count('data-table="configs-') == 2 and doc.count("<script") == 0  # self-contained
    listing = re.search(r'<table data-table="trace-list">(.*?)</table>', doc, re.DOTALL).group(1)
    assert listing.count('<td class="l">0–2</td><td class="l">0–5</td>') == 6
    assert sorted(re.findall(r'href="#(trace-\d)"', listing)) == [f"trace-{k}" for k in range(6)]
    assert not re.search(r'(src|href)="http', doc)


def test_report_labels_every_configuration_by_what_varies(report):
    _, _, path, _ = report
    doc = path.read_text()
    # "fig" varies coap.cc and link.buffer_bytes: its table has both as columns, and every
    # trace caption names both values.
    assert '<th class="l">algorithm</th><th class="l">bottleneck buffer (bytes)</th>' in doc
    assert doc.count("cc=fasor, buffer_bytes=1,410,000") >= 1
    # The SVG figures keep their text as text (axis titles with units).
    assert "flow completion time (s)" in doc and "retransmissions per exchange" in doc


def test_report_where_filter(report):
    from coaplab.errors import CoaplabError
    from coaplab.present.report import build

    _, db, _, _ = report
    doc, ids = build(db, where="coap.cc in ('cocoa', 'fasor') and link.buffer_bytes = 2500")
    # Two of the 6 + 2 configurations match: one scenario, two traced configurations.
    assert "<p>2 configurations matching" in doc
    assert sum(i.startswith("fct-") for i in ids) == 1 and sum(i.startswith("trace-") for i in ids) == 2
    with pytest.raises(CoaplabError, match="--where: .* matches none"):
        build(db, where="coap.cc = 'nope'")
    with pytest.raises(CoaplabError, match="--where: 'coap.nosuchkey' is not a configuration key"):
        build(db, where="coap.nosuchkey = 1")


def test_report_renders_in_chromium(report):
    chromium = _chromium()
    tmp, _, path, ids = report
    dom = subprocess.run([chromium, *CHROMIUM_FLAGS, f"--user-data-dir={tmp / 'profile'}", "--dump-dom", path.as_uri()],
                         capture_output=True, text=True, timeout=120, check=False)
    assert dom.returncode == 0, dom.stderr[-2000:]
    for fid in ids:
        figure = re.search(rf'<figure id="{fid}" data-figure="{fid}">(.*?)</figure>', dom.stdout, re.DOTALL)
        assert figure, f"figure {fid} missing from the rendered page"
        assert "<svg" in figure.group(1) and "<path" in figure.group(1)
    assert "Uncaught" not in dom.stderr
    artifacts = ROOT / "artifacts"
    artifacts.mkdir(exist_ok=True)
    shot = artifacts / "report.png"
    out = subprocess.run([chromium, *CHROMIUM_FLAGS, f"--user-data-dir={tmp / 'profile'}", "--window-size=1200,3000",
                          f"--screenshot={shot}", path.as_uri()], capture_output=True, text=True, timeout=120, check=False)
    assert out.returncode == 0 and shot.stat().st_size > 20_000, out.stderr[-2000:]


def test_the_configurations_table_stays_inside_the_page_at_1400_px(report):
    # A wide configurations table (many columns, cells that do not wrap) scrolls inside its own
    # box instead of running past the page's right edge. Measured in Chromium at 1400 px: a
    # copy of the report with a script that writes the boxes' right edges into the DOM.
    chromium = _chromium()
    tmp, _, path, _ = report
    # Per configurations table: the right edge of what the page shows of it (its scroll box, or
    # the table itself when nothing clips it) is within the body's.
    probe = ("<script>addEventListener('load',()=>{const b=document.body.getBoundingClientRect().right;"
             "const r=[...document.querySelectorAll('table[data-table^=\"configs-\"]')].map(t=>{"
             "const box=getComputedStyle(t.parentElement).overflowX==='auto'?t.parentElement:t;"
             "return [Math.round(box.getBoundingClientRect().right-b),t.getBoundingClientRect().width>0]});"
             "document.body.setAttribute('data-probe',JSON.stringify(r))})</script>")
    page = tmp / "probe.html"
    page.write_text(path.read_text().replace("</body>", probe + "</body>"))
    dom = subprocess.run([chromium, *CHROMIUM_FLAGS, f"--user-data-dir={tmp / 'profile'}", "--window-size=1400,3000",
                          "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120, check=False)
    assert dom.returncode == 0, dom.stderr[-2000:]
    found = re.search(r'data-probe="([^"]*)"', dom.stdout)
    assert found, "the probe did not run"
    import html
    import json

    boxes = json.loads(html.unescape(found.group(1)))
    assert len(boxes) == 2
    assert all(overflow <= 0 and shown for overflow, shown in boxes), boxes


def test_report_cli_errors(cli, tmp_path):
    out = cli("report", "--db", tmp_path / "missing.duckdb", "--out", tmp_path / "o")
    assert out.returncode == 2 and "does not exist" in out.stderr
    import duckdb

    duckdb.connect(str(tmp_path / "empty.duckdb")).close()
    out = cli("report", "--db", tmp_path / "empty.duckdb", "--out", tmp_path / "o")
    assert out.returncode == 2 and "coaplab: error:" in out.stderr


def test_report_draws_client_groups(tmp_path):
    # A real run with two populations sharing the bottleneck: 50 `default` clients (whose 2-3 s
    # timers fire before the ≈ 3 s round trip of a 100-client queue: spurious retransmissions)
    # and 50 `cocoa-fb2` clients. The report draws FCT, unnecessary retransmissions and the
    # retransmission histogram by group.
    from coaplab.present.report import build

    db = tmp_path / "g.duckdb"
    scen = {"name": "mixed", "replications": 1, "link": {"buffer_bytes": 1410000},
            "workload": {"exchanges": 10}, "coap": {"max_retransmit": 20},
            "group": [{"name": "legacy", "clients": 50, "coap": {"cc": "default"}},
                      {"name": "safe", "clients": 50, "coap": {"cc": "cocoa-fb2"}}]}
    res = coaplab.run(scen, jobs=2, db=db)
    groups = res.summaries[0]["groups"]
    assert groups["legacy"]["unnecessary_retransmissions_total"] > groups["safe"]["unnecessary_retransmissions_total"]
    doc, ids = build(db)
    assert {"groups-0", "groups-unnecessary-0", "groups-histogram-0"} <= set(ids), ids
    assert "client group" in doc and "legacy" in doc and "safe" in doc


def test_a_periodic_mesh_report_draws_the_hop_delay_not_fct_boxes(tmp_path):
    # A periodic workload's FCT is set by its period (docs/networks.md): the report draws the
    # exchange delay by hop distance and the carried load instead of FCT boxes.
    from coaplab.present.report import build

    db = tmp_path / "mesh.duckdb"
    coaplab.run({"name": "mesh", "replications": 1, "network": {"kind": "chain"},
                 "workload": {"kind": "periodic", "clients": 4, "duration_s": 30.0, "request_bytes": 95,
                              "response_bytes": 0},
                 "sweep": {"workload.period_s": [5.0, 2.0]}}, db=db)
    doc, ids = build(db)
    assert "hop-delay-0" in ids and "load-0" in ids
    assert not any(i.startswith("fct-") for i in ids)
    assert "hops to the sink" in doc and "exchange delay (s)" in doc
    # One configuration: its carried load too (one point against the carried = offered line).
    _, ids = build(db, where="workload.period_s = 5")
    assert ids[:2] == ["hop-delay-0", "load-0"]
