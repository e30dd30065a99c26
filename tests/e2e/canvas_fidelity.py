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
window.drawBoth = async (fig, spec, h) => {{
  const gd = document.getElementById('plotly'), box = document.getElementById('canvas');
  gd.style.height = h + 'px';
  Plotly.purge(gd);                                 // margins Plotly reserved for the last figure stay otherwise
  await Plotly.react(gd, fig.data, {{...fig.layout, width: {W}, height: h}}, {{displayModeBar: false, staticPlot: true}});
  // automargin (a title with a subtitle, a legend below) redraws a moment later, maybe more
  // than once: wait until the plot area has kept still for a few frames
  const frame = () => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 10)));
  for (let last = '', still = 0, i = 0; still < 4 && i < 100; i++) {{
    await frame();
    const now = JSON.stringify(gd._fullLayout._size);
    still = now === last ? still + 1 : 0; last = now;
  }}
  const holder = document.createElement('div');     // a fresh component element per figure
  box.replaceChildren(holder);
  mount({{data: {{spec: {{...spec, layout: {{...spec.layout, height: h}}}}}}, parentElement: holder, setTriggerValue() {{}}}});
  const canvas = box.querySelector('canvas'), c = canvas.__dlplay, fl = gd._fullLayout;
  const top = gd.getBoundingClientRect();
  // one spelling for both: Plotly's minus sign, and its superscript exponents (10<sup>-8</sup>:
  // zero-width spaces around plain digits) against the canvas's superscript characters
  const SUP = '⁰¹²³⁴⁵⁶⁷⁸⁹⁻', norm = (s) => s.replace(/\\u2212/g, '-').replace(/\\u200b/g, '')
    .replace(/[⁰¹²³⁴⁵⁶⁷⁸⁹⁻]/g, (ch) => '0123456789-'[SUP.indexOf(ch)]);
  const axes = {{}};
  for (const id of Object.keys(c.axes)) {{
    const name = id[0] + 'axis' + id.slice(1), a = fl[name];
    if (!a) continue;
    // an x label's tick: its translate (a rotated label's box is off to one side)
    const ticks = [...gd.querySelectorAll(`.${{id}}tick text`)].map((t) => {{
      const r = t.getBoundingClientRect(), tr = t.getAttribute('transform') || '';
      const at = tr.match(/translate\\(([-\\d.e]+)/);
      return [norm(t.textContent), id[0] === 'x' ? (at ? +at[1] : r.left + r.width / 2 - top.left) : r.top + r.height / 2 - top.top, tr];
    }});
    const rot = ticks.length ? ticks[0][2].match(/rotate\\(([-\\d.e]+)/) : null;
    axes[id] = {{range: a.range.slice(), start: a._offset, len: a._length, ticks, angle: rot ? Math.round(+rot[1]) : 0}};
  }}
  const legend = [...gd.querySelectorAll('.legendtext')].map((t) => t.textContent);
  // every subplot's plot area (css px from the top left of the figure): where data is drawn
  const plots = Object.values(fl._plots || {{}}).map((p) => ({{
    x: p.xaxis._id, y: p.yaxis._id, l: p.xaxis._offset, t: p.yaxis._offset, w: p.xaxis._length, h: p.yaxis._length}}));
  return {{plotly: {{axes, legend, plots}}, canvas: {{...c, axes: Object.fromEntries(Object.entries(c.axes).map(([k, a]) => [k, {{...a, ticks: a.ticks.map(([s, p]) => [norm(s), p])}}]))}}}};
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
    return draw_spec(page, json.loads(fig.to_json()), spec)


def draw_spec(page, fig_json: dict, spec: dict) -> dict:
    """A styled figure's plotly JSON and the canvas spec made of it, drawn both ways at the
    figure's own height (else H)."""
    h = int(spec.get("layout", {}).get("height") or fig_json.get("layout", {}).get("height") or H)
    return page.evaluate("([fig, spec, h]) => window.drawBoth(fig, spec, h)", [fig_json, spec, h])


def screenshot(page, path: Path) -> None:
    page.screenshot(path=str(path), full_page=True)


PX = 4.0           # tick label positions (they follow the plot area and its range)
AREA_PX = 4.0      # the plot area (Plotly's automargin for turned labels is matched to ~3 px)
RANGE_PX = 1.5     # an axis range's ends, in px of the axis (markers pad ranges by px)


def _same_label(a: str, b: str) -> bool:
    """Equal texts, or numbers equal to 1e-4 (a label printed at full precision, such as
    a synced log axis's near-decade tick, carries the last digits of its float position)."""
    if a == b:
        return True
    try:
        return abs(float(a) - float(b)) <= 1e-4 * max(abs(float(a)), abs(float(b)))
    except ValueError:
        return False


def layout_mismatches(out: dict, name: str) -> list[str]:
    """What the canvas laid out differently from Plotly: legend entries; per axis the range
    (its ends to RANGE_PX), where the plot area starts and ends (AREA_PX each), tick label
    texts, their angle and their positions (PX)."""
    p, c = out["plotly"], out["canvas"]
    bad = []
    if c["legend"] != p["legend"]:
        bad.append(f"{name}: legend canvas {c['legend']} Plotly {p['legend']}")
    for aid, pa in p["axes"].items():
        ca = c["axes"].get(aid)
        if ca is None:
            bad.append(f"{name}: {aid} not drawn by the canvas")
            continue
        span = abs(pa["range"][1] - pa["range"][0]) or 1.0
        if any(abs(a - b) / span * pa["len"] > RANGE_PX for a, b in zip(ca["range"], pa["range"])):
            bad.append(f"{name}: {aid} range canvas {ca['range']} Plotly {pa['range']}")
        if (abs(ca["start"] - pa["start"]) > AREA_PX
                or abs(ca["start"] + ca["len"] - pa["start"] - pa["len"]) > AREA_PX):
            bad.append(f"{name}: {aid} plot area canvas {ca['start']:.0f}+{ca['len']:.0f} "
                       f"Plotly {pa['start']:.0f}+{pa['len']:.0f}")
        # in the order of their positions (Plotly's DOM lists a reversed axis top down)
        ca["ticks"] = sorted(ca["ticks"], key=lambda t: t[1])
        pa["ticks"] = sorted(pa["ticks"], key=lambda t: t[1])
        ct, pt = [t for t, *_ in ca["ticks"]], [t for t, *_ in pa["ticks"]]
        if not all(map(_same_label, ct, pt)) or len(ct) != len(pt):
            bad.append(f"{name}: {aid} ticks canvas {ct} Plotly {pt}")
            continue
        if ca["angle"] != pa["angle"]:
            bad.append(f"{name}: {aid} labels turned {ca['angle']}, Plotly {pa['angle']}")
        for (t, q), (_, pq, _) in zip(ca["ticks"], pa["ticks"]):
            if abs(q - pq) > PX:
                bad.append(f"{name}: {aid} tick {t} at {q:.1f}, Plotly {pq:.1f}")
    return bad


BLOCK = 8          # px: the ink comparison's cells (hides anti-aliasing and 1-2 px offsets)
INK_DIFF = 48      # a cell differs when its mean colour differs by more than this (0-255)
INK_SHARE = 0.02   # ... and at most this share of a plot area's cells may differ (the live
                   # frames differ in < 0.3%; a mirrored loss curve 412 px tall in ~5%)


def screenshots(page) -> tuple:
    """The two drawings as RGB arrays (css px; the harness runs at device scale 1)."""
    import io

    import numpy as np
    from PIL import Image

    def rgb(png):
        return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"), dtype=np.float64)
    return (rgb(page.locator("#plotly").screenshot()),
            rgb(page.locator("#canvas canvas").screenshot()))


def ink_mismatches(out: dict, plotly_img, canvas_img, name: str) -> list[str]:
    """Per subplot, the data the two drawings paint inside their plot areas: each drawing
    cropped to its own plot area (2 px in from the edges, where axis lines sit; where the
    areas are placed is layout_mismatches' job), the canvas's resized to Plotly's, both cut
    into BLOCK x BLOCK cells and each cell's mean colour compared; more than INK_SHARE of the
    cells off by INK_DIFF fails."""
    import numpy as np
    from PIL import Image
    bad = []
    axes = out["canvas"]["axes"]
    for p in out["plotly"]["plots"]:
        cx, cy = axes.get(p["x"]), axes.get(p["y"])
        if cx is None or cy is None:
            bad.append(f"{name}: {p['x']}{p['y']} not drawn by the canvas")
            continue

        def crop(img, l, t, w, h):
            l, t = int(round(l)) + 2, int(round(t)) + 2
            return img[t:t + int(h) - 4, l:l + int(w) - 4]
        a = crop(plotly_img, p["l"], p["t"], p["w"], p["h"])
        b = crop(canvas_img, cx["start"], cy["start"], cx["len"], cy["len"])
        if min(a.shape[:2]) < BLOCK or min(b.shape[:2]) < BLOCK:
            bad.append(f"{name}: {p['x']}{p['y']} plot area too small to compare")
            continue
        b = np.asarray(Image.fromarray(b.astype(np.uint8)).resize((a.shape[1], a.shape[0]),
                                                                   Image.BILINEAR), float)
        hh, ww = (a.shape[0] // BLOCK) * BLOCK, (a.shape[1] // BLOCK) * BLOCK

        def cells(img):
            return img[:hh, :ww].reshape(hh // BLOCK, BLOCK, ww // BLOCK, BLOCK, 3).mean((1, 3))
        diff = np.abs(cells(a) - cells(b)).max(-1)
        share = float((diff > INK_DIFF).mean())
        if share > INK_SHARE:
            bad.append(f"{name}: {p['x']}{p['y']} data pixels differ in {share:.0%} of the "
                       f"plot area's {BLOCK} px cells (at most {INK_SHARE:.0%})")
    return bad

