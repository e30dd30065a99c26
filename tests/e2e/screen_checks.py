"""What a teacher sees on the projector, measured in the browser (used by the e2e walk).

`look(page, show_key)` returns the problems on the screen as it is now (no scrolling):

- the main figure: the charts of the topmost row (Plotly or the live canvas, >= 150 px tall;
  charts side by side count as one figure) must lie inside the viewport and cover at least
  MIN_COVER of its area;
- "Show me" (the tour card's button, when the card has one) inside the viewport;
- text boxes: inside every Plotly chart, each pair of visible text elements (annotations,
  subplot and figure titles, axis titles, tick labels, legend) must not overlap, and none
  may stick out of its chart (clipped); on the page, widget labels, metrics, tables and
  charts must not overlap one another.
"""
from __future__ import annotations

import re

MIN_COVER = 0.45
SLACK_PX = 2          # boxes may touch: anti-aliasing and rounding give a pixel or two

LOOK_JS = """([showKey, minCover, slack]) => {
  const W = innerWidth, H = innerHeight, out = [];
  const shown = e => { const r = e.getBoundingClientRect();
    return r.width > 0 && r.height > 0 && getComputedStyle(e).visibility !== 'hidden'; };
  const meet = (a, b) => Math.min(a.right, b.right) - Math.max(a.left, b.left) > slack &&
                         Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > slack;
  const label = e => (e.textContent || '').trim().slice(0, 40);
  // ---- the main figure
  const charts = [...document.querySelectorAll(
      '.js-plotly-plot, [class*="st-key-live-canvas"], [data-testid="stVegaLiteChart"]')]
    .filter(shown).filter(e => !e.closest('[data-testid="stExpanderDetails"]'))
    .map(e => e.getBoundingClientRect()).filter(r => r.height >= 150);
  let cover = null;
  if (!charts.length) out.push('no figure on the page');
  else {
    const top = Math.min(...charts.map(r => r.top + scrollY));
    const row = charts.filter(r => r.top + scrollY < top + 80);
    const box = {left: Math.min(...row.map(r => r.left)), right: Math.max(...row.map(r => r.right)),
                 top: Math.min(...row.map(r => r.top)), bottom: Math.max(...row.map(r => r.bottom))};
    cover = (box.right - box.left) * (box.bottom - box.top) / (W * H);
    if (box.top < -slack || box.bottom > H + slack || box.left < -slack || box.right > W + slack)
      out.push(`main figure not whole on the screen: y ${Math.round(box.top)}-${Math.round(box.bottom)}` +
               ` x ${Math.round(box.left)}-${Math.round(box.right)} (screen ${W}x${H})`);
    if (cover < minCover)
      out.push(`main figure covers ${(100 * cover).toFixed(0)}% of the screen (< ${100 * minCover}%)`);
  }
  // ---- Show me
  if (showKey) {
    const b = document.querySelector(`.st-key-${showKey} button`);
    if (b) { const r = b.getBoundingClientRect();
      if (r.top < 0 || r.bottom > H || r.left < 0 || r.right > W)
        out.push(`"Show me" off the screen at y ${Math.round(r.top)}-${Math.round(r.bottom)}`); }
  }
  // ---- text inside each chart
  document.querySelectorAll('.js-plotly-plot').forEach((plot, i) => {
    if (!shown(plot) || plot.closest('[data-testid="stExpanderDetails"]')) return;
    const frame = plot.getBoundingClientRect();
    const name = label(plot.querySelector('.gtitle') || {}) || ('chart ' + i);
    const texts = [...plot.querySelectorAll('text')].filter(t => label(t) && shown(t) &&
        !t.closest('.hoverlayer, .modebar, .legend'));
    const boxes = texts.map(t => ({t, r: t.getBoundingClientRect()}));
    const legend = plot.querySelector('.legend .bg');
    if (legend && shown(legend)) boxes.push({t: legend, r: legend.getBoundingClientRect(), legend: true});
    for (const {t, r, legend: isLegend} of boxes)
      if (r.left < frame.left - slack || r.right > frame.right + slack ||
          r.top < frame.top - slack || r.bottom > frame.bottom + slack)
        out.push(`${name}: "${isLegend ? 'legend' : label(t)}" clipped by the chart's edge`);
    for (let a = 0; a < boxes.length; a++) for (let b = a + 1; b < boxes.length; b++) {
      const A = boxes[a], B = boxes[b];
      if (A.t.contains(B.t) || B.t.contains(A.t)) continue;
      if (meet(A.r, B.r))
        out.push(`${name}: "${A.legend ? 'legend' : label(A.t)}" over "${B.legend ? 'legend' : label(B.t)}"`);
    }
  });
  // ---- page elements: widget labels, metrics, tables, charts
  const sel = '[data-testid="stWidgetLabel"], [data-testid="stMetric"], [data-testid="stTable"], ' +
              '[data-testid="stDataFrame"], [data-testid="stPlotlyChart"]';
  const items = [...document.querySelectorAll(sel)].filter(shown)
    .filter(e => !e.closest('[data-testid="stExpanderDetails"], [data-testid="stSidebar"]'))
    .map(e => ({e, r: e.getBoundingClientRect()}));
  for (let a = 0; a < items.length; a++) for (let b = a + 1; b < items.length; b++) {
    const A = items[a], B = items[b];
    if (A.e.contains(B.e) || B.e.contains(A.e)) continue;
    if (meet(A.r, B.r))
      out.push(`"${label(A.e) || A.e.dataset.testid}" over "${label(B.e) || B.e.dataset.testid}"`);
  }
  return {problems: [...new Set(out)], cover};
}"""


def look(page, show_key: str | None = None,
         min_cover: float = MIN_COVER) -> tuple[list[str], float | None]:
    """(problems, main figure's share of the screen) of the screen as it is now."""
    got = page.evaluate(LOOK_JS, [show_key, min_cover, SLACK_PX])
    return got["problems"], got["cover"]


# ---- what a card's words point to (Preset.shows / Step.shows: widget keys)
SHOWN_JS = """([keys, slack]) => keys.map(key => {
  const e = document.querySelector(`.st-key-${key}`);
  if (!e) return `"${key}" (named by the card) is not on the page`;
  const r = e.getBoundingClientRect();
  if (r.width <= 0 || r.height <= 0) return `"${key}" (named by the card) is hidden`;
  if (r.top < -slack || r.bottom > innerHeight + slack || r.left < -slack ||
      r.right > innerWidth + slack)
    return `"${key}" (named by the card) off the first screen: y ${Math.round(r.top)}-` +
           `${Math.round(r.bottom)} (screen ${innerWidth}x${innerHeight})`;
  return null;
}).filter(p => p)"""


def unseen(page, keys) -> list[str]:
    """The widgets `keys` (figures, metrics, buttons a card's words point to) that are not
    whole on the screen as it is now (no scrolling)."""
    return page.evaluate(SHOWN_JS, [list(keys), SLACK_PX]) if keys else []


# ---- the numbers a card states, looked for on the rest of the screen
#
# The card's words (the tour step's or preset's text; not its claim list, whose lines print
# each measured value and the bound it was checked against) are read for numbers with a
# decimal point, a per cent sign or at least two digits (single digits are mostly indices
# and formula constants: "step 2", "|1 − ηλ| < 1"). Each must be on the screen outside those
# words: in a chart's text, a metric, a widget's value, a table, a caption or the card's
# claim list, inside the viewport, at the precision stated (0.96 matches 0.962, 47% matches
# 46.9%). A number that names a claim's measurement is compared with that claim's value at
# the claim's own tolerance instead (`claim_windows`): where the stated number and the
# measured value both lie within the claim's bounds, they may differ by one unit of the
# number's last digit, so a value another machine rounds the other way ("41%" against a
# measured 40.4%) is still the number the text states.
NUMBERS_JS = """([slug]) => {
  const card = document.querySelector(`.st-key-${slug}__card, .st-key-${slug}__preset_card`);
  if (!card) return null;
  const W = innerWidth, H = innerHeight;
  const inView = r => r.width > 0 && r.height > 0 && r.bottom > 0 && r.top < H &&
                      r.right > 0 && r.left < W;
  const prose = [...card.querySelectorAll('[data-testid="stMarkdownContainer"]')]
    .filter(m => !m.querySelector('ul, ol') && !m.closest('ul, ol'));
  const said = prose.map(m => m.innerText).join(' ');
  const seen = [];
  const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walk.nextNode(); n; n = walk.nextNode()) {
    const el = n.parentElement;
    if (!el || prose.some(m => m.contains(el)) || !n.textContent.trim()) continue;
    if (el.closest('[data-testid="stExpanderDetails"], [data-testid="stSidebar"], .hoverlayer'))
      continue;
    const r = el.getBoundingClientRect();
    if (inView(r) && getComputedStyle(el).visibility !== 'hidden') seen.push(n.textContent);
  }
  document.querySelectorAll('input').forEach(i => {
    if (inView(i.getBoundingClientRect())) seen.push(i.value || '');
  });
  const claims = [...card.querySelectorAll('li')].filter(li => inView(li.getBoundingClientRect()))
    .map(li => li.innerText);
  return {said, seen: seen.join(' '), claims};
}"""

# a tour card's heading "k/N · title": where the class is in the tour, not a stated number
TOUR_COUNTER = r"^\s*\d+/\d+ · "
NUMBER = r"(?<![\w.])[-−]?\d[\d,]*(?:\.\d+)?(?:[eE][-−+]?\d+)?%?"


def numbers_in(text: str) -> list[str]:
    """The numbers of `text` worth checking (see NUMBERS_JS), as written."""
    import re
    out = []
    for token in re.findall(NUMBER, text):
        digits = sum(ch.isdigit() for ch in token)
        if token.isdigit() and 1900 <= int(token) < 2100:
            continue                   # a year: a citation ("Luo et al. 2016"), not a number
        if "." in token or token.endswith("%") or digits >= 2:
            out.append(token.rstrip(",").rstrip("."))
    return out


def _value(token: str) -> tuple[float, float]:
    """(value, half a unit of its last stated digit)."""
    t = token.replace("−", "-").replace(",", "").rstrip("%")
    mantissa = t.lower().split("e")[0]
    decimals = len(mantissa.split(".")[1]) if "." in mantissa else 0
    value = float(t)
    exponent = int(t.lower().split("e")[1]) if "e" in t.lower() else 0
    return value, 0.5 * 10.0 ** (exponent - decimals) * 1.0001


# a claim line as the card prints it (ui.claims.claim_line) once it holds:
# "what: 0.452 ✓ (0.4 to 0.5)" or "what: 41.0% ✓ (≥ 38.0%)"
CLAIM_LINE = (rf":\s*({NUMBER})\s*✓\s*\((?:([≥≤])\s*({NUMBER})|({NUMBER}) to ({NUMBER}))\)\s*$")


def _number(token: str) -> float:
    return float(token.replace("−", "-").replace(",", "").rstrip("%"))


def claim_windows(lines) -> list[tuple[bool, float, float, float]]:
    """(per cent?, measured value, lo, hi) of each claim line that holds (✓) and prints a bound;
    lines printed in words or not measured here give nothing."""
    out = []
    for line in lines:
        m = re.search(CLAIM_LINE, line.strip())
        if not m:
            continue
        value, side, one, lo, hi = m.groups()
        if side:
            lo, hi = (one, None) if side == "≥" else (None, one)
        out.append((value.endswith("%"), _number(value),
                    _number(lo) if lo else -float("inf"), _number(hi) if hi else float("inf")))
    return out


def missing_numbers(said: str, seen: str, claims=()) -> list[str]:
    """The numbers stated in `said` that `seen` shows at no matching value: the same
    number at the stated precision (a rounding of a longer number counts), per cents with
    per cents; or, for a number that names a claim of the card (`claims`, its lines), the
    claim's measured value within the claim's tolerance (see the note above NUMBERS_JS)."""
    shown = [(t.endswith("%"), *_value(t)) for t in re.findall(NUMBER, seen)
             if any(ch.isdigit() for ch in t)]
    windows = claim_windows(claims)
    out = []
    for token in numbers_in(said):
        pct = token.endswith("%")
        value, half = _value(token)
        if any(p == pct and abs(v - value) <= half for p, v, _ in shown):
            continue
        if any(p == pct and lo <= value <= hi and abs(v - value) <= 2 * half
               for p, v, lo, hi in windows):
            continue
        out.append(token)
    return out


def card_numbers(page, slug: str) -> dict | None:
    """{"stated": [...], "missing": [...]} for the card on the screen now, or None."""
    got = page.evaluate(NUMBERS_JS, [slug])
    if got is None:
        return None
    said = re.sub(TOUR_COUNTER, "", got["said"])
    return {"stated": numbers_in(said),
            "missing": missing_numbers(said, got["seen"], got.get("claims", []))}
