"""The HTML page parts every report shares (``coaplab report``, ``compare``, ``scorecard``): the
style sheet, escaping, and a figure with its caption, so that the pages look and are built alike."""

from __future__ import annotations

import html
from typing import Any

CSS = """
body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;margin:2em auto;max-width:1100px;color:#222;
 line-height:1.4;padding:0 1em}
h1{font-size:1.6em;margin-bottom:.2em}h2{font-size:1.3em;border-bottom:1px solid #ddd;padding-bottom:.2em;margin-top:2em}
h3{font-size:1.05em;margin-top:1.4em}
figure{margin:1em 0 1.6em}figure svg{width:100%;max-width:860px;height:auto}
figcaption{font-size:13px;color:#444;max-width:760px}
table{border-collapse:collapse;font-size:13px;margin:.6em 0 1em}
td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}th{background:#f5f5f5}
td.l,th.l{text-align:left}td{white-space:nowrap}code{font-size:12px;background:#f3f3f3;padding:0 3px}
nav ul{columns:2;font-size:14px}.muted{color:#666;font-size:13px}
.table-box{max-width:100%;overflow-x:auto;margin:.6em 0 1em}.table-box table{margin:0}.table-box th{white-space:normal;min-width:4em}
"""


def esc(x: Any) -> str:
    """``x`` as HTML text."""
    return html.escape(str(x))


def figure_html(fid: str, caption: str, fig: Any) -> str:
    """A figure (anything with ``to_svg()``: :class:`coaplab.present.figures.Figure`) as inline SVG
    with its caption; ``fid`` names it for links and tests."""
    svg = fig.to_svg()
    return f'<figure id="{esc(fid)}" data-figure="{esc(fid)}">{svg}<figcaption>{esc(caption)}</figcaption></figure>'
