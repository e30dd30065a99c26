"""The same figure drawn by the live canvas (live/canvas.js) and by Plotly (the installed
plotly package's plotly.min.js) side by side in Chromium, and what each laid out: axis ranges,
tick label texts and positions, legend entries. Used by test_canvas_fidelity.py."""
from __future__ import annotations

import json
from pathlib import Path

from live import canvas as lc
from ui.theme import style_figure

W, H = 700, 420
HARNESS = f"""<!doctype html><html><head><meta charset="utf-8">
<script src="/plotly.min.js"></script></head>
<body style="margin:0;width:{W}px">
<div id="plotly" style="width:{W}px;height:{H}px"></div><div id="canvas" style="width:{W}px"></div>
<script type="module">
import mount from '/live_canvas.js';
window.drawBoth = async (fig, spec) => {{
  const gd = document.getElementById('plotly'), box = document.getElementById('canvas');
  await Plotly.react(gd, fig.data, {{...fig.layout, width: {W}, height: {H}}}, {{displayModeBar: false, staticPlot: true}});
  const holder = document.createElement('div');     // a fresh component element per figure
  box.replaceChildren(holder);
  mount({{data: {{spec: {{...spec, layout: {{...spec.layout, height: {H}}}}}}}, parentElement: holder, setTriggerValue() {{}}}});
  const canvas = box.querySelector('canvas'), c = canvas.__dlplay, fl = gd._fullLayout;
  const top = gd.getBoundingClientRect();
  const norm = (s) => s.replace(/\\u2212/g, '-');
  const axes = {{}};
  for (const id of Object.keys(c.axes)) {{
    const name = id[0] + 'axis' + id.slice(1), a = fl[name];
    if (!a) continue;
    // an x label's tick: its translate (a rotated label's box is off to one side)
    const ticks = [...gd.querySelectorAll(`.${{id}}tick text`)].map((t) => {{
      const r = t.getBoundingClientRect(), tr = t.getAttribute('transform') || '';
      const at = tr.match(/translate\(([-\d.e]+)/);
      return [norm(t.textContent), id[0] === 'x' ? (at ? +at[1] : r.left + r.width / 2 - top.left) : r.top + r.height / 2 - top.top, tr];
    }});
    const rot = ticks.length ? ticks[0][2].match(/rotate\(([-\d.e]+)/) : null;
    axes[id] = {{range: a.range.slice(), start: a._offset, len: a._length, ticks, angle: rot ? Math.round(+rot[1]) : 0}};
  }}
  const legend = [...gd.querySelectorAll('.legendtext')].map((t) => t.textContent);
  return {{plotly: {{axes, legend}}, canvas: {{...c, axes: Object.fromEntries(Object.entries(c.axes).map(([k, a]) => [k, {{...a, ticks: a.ticks.map(([s, p]) => [norm(s), p])}}]))}}}};
}};
window.ready = true;
</script></body></html>"""


def open_harness(browser):
    """A page with plotly.js and live_canvas.js loaded (served from memory, no network)."""
    context = browser.new_context(viewport={"width": W + 20, "height": 2 * H + 40})
    page = context.new_page()
    files = {"/": (HARNESS.encode(), "text/html"),
             "/plotly.min.js": (lc.plotly_js().read_bytes(), "text/javascript"),
             "/live_canvas.js": (lc._JS.read_bytes(), "text/javascript")}

    def serve(route):
        path = "/" + route.request.url.split("//harness/", 1)[1]
        body, kind = files.get(path, (b"", "text/plain"))
        route.fulfill(status=200 if path in files else 404, body=body, content_type=kind)
    page.route("http://harness/**", serve)
    page.goto("http://harness/")
    page.wait_for_function("() => window.ready && window.Plotly", timeout=60_000)
    return context, page


def draw_both(page, fig, classroom: bool = False) -> dict:
    """fig drawn both ways: {"plotly": layout, "canvas": layout}."""
    style_figure(fig, classroom)
    spec = lc.to_spec(fig)
    assert spec is not None, "the canvas refuses this figure"
    fig_json = json.loads(fig.to_json())
    return page.evaluate("([fig, spec]) => window.drawBoth(fig, spec)", [fig_json, spec])


def screenshot(page, path: Path) -> None:
    page.screenshot(path=str(path), full_page=True)
