// A Plotly figure (the subset live/canvas.py lets through) painted on one <canvas>:
// a playing live frame costs a few ms of browser CPU instead of Plotly's SVG relayout.
// Called by Streamlit with new `data` on each rerun; the same element keeps its canvas.
const CHARTS = new WeakMap();   // parentElement -> a slot {canvas, box, spec, width, gen, observer}
const TYPED = {f4: Float32Array, f8: Float64Array, i1: Int8Array, u1: Uint8Array,
  i2: Int16Array, u2: Uint16Array, i4: Int32Array, u4: Uint32Array};
const DASH = {dot: [1, 1], dash: [3, 3], longdash: [5, 5], dashdot: [3, 1, 1, 1],
  longdashdot: [5, 2, 1, 2]};

// ---- data ------------------------------------------------------------------------------
function numbers(v) {                         // typed array / list (null -> NaN) -> array
  if (v == null) return null;
  if (v.bdata !== undefined) {
    const bin = atob(v.bdata), bytes = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    return new TYPED[v.dtype.replace(/[<>|=]/g, '')](bytes.buffer);
  }
  if (Array.isArray(v)) return Float64Array.from(v.flat(), (x) => (x == null ? NaN : +x));
  return null;
}
function grid(z) {                            // z -> {a, rows, cols}
  const a = numbers(z);
  if (z.bdata !== undefined) {
    const s = String(z.shape || a.length).split(',').map(Number);
    return {a, rows: s.length > 1 ? s[0] : 1, cols: s.length > 1 ? s[1] : s[0]};
  }
  return {a, rows: z.length, cols: a.length / Math.max(z.length, 1)};
}
function plain(text) {                        // Plotly's HTML-ish text -> lines
  return String(text ?? '').replace(/<br\s*\/?>/gi, '\n').replace(/<[^>]+>/g, '')
    .replace(/&amp;/g, '&').replace(/&lt;/g, '<').replace(/&gt;/g, '>').split('\n');
}
const titleText = (t) => (t == null ? '' : typeof t === 'string' ? t : t.text ?? '');

let probe = null;
const RGB_CACHE = new Map();
function rgb(color) {                          // any CSS colour -> [r, g, b, a]
  if (RGB_CACHE.has(color)) return RGB_CACHE.get(color);
  probe = probe || document.createElement('canvas').getContext('2d');
  probe.fillStyle = '#000'; probe.fillStyle = color;
  const s = probe.fillStyle;                   // "#rrggbb" or "rgba(r, g, b, a)"
  const out = s[0] === '#' ? [1, 3, 5].map((i) => parseInt(s.slice(i, i + 2), 16)).concat(1)
    : s.match(/[\d.]+/g).map(Number).concat(1).slice(0, 4);
  RGB_CACHE.set(color, out);
  return out;
}
const FINE = 4096;                             // heatmap cells: colour steps of 1/4095
function lut(scale, reverse, n = 256) {       // colour scale -> n x rgba
  const stops = scale.map(([p, c]) => [+p, rgb(c)]);
  if (reverse) stops.reverse().forEach((s) => { s[0] = 1 - s[0]; });
  const out = new Uint8ClampedArray(n * 4);
  for (let i = 0, k = 0; i < n; i++) {
    const t = i / (n - 1);
    while (k < stops.length - 2 && t > stops[k + 1][0]) k++;
    const [p0, c0] = stops[k], [p1, c1] = stops[Math.min(k + 1, stops.length - 1)];
    const f = p1 > p0 ? Math.min(1, Math.max(0, (t - p0) / (p1 - p0))) : 0;
    for (let j = 0; j < 3; j++) out[i * 4 + j] = c0[j] + f * (c1[j] - c0[j]);
    out[i * 4 + 3] = 255 * (c0[3] + f * (c1[3] - c0[3]));
  }
  return out;
}
function extent(a, lo = Infinity, hi = -Infinity) {
  for (let i = 0; i < a.length; i++) { const v = a[i]; if (v < lo) lo = v; if (v > hi) hi = v; }
  return [lo, hi];
}
function edges(v, n) {                        // cell centres (n) or edges (n+1) -> n+1 edges
  const a = numbers(v);
  if (!a || !a.length) return Float64Array.from({length: n + 1}, (_, i) => i - 0.5);
  if (a.length === n + 1) return a;
  const e = new Float64Array(n + 1);
  for (let i = 1; i < n; i++) e[i] = (a[i - 1] + a[i]) / 2;
  e[0] = n > 1 ? a[0] - (a[1] - a[0]) / 2 : a[0] - 0.5;
  e[n] = n > 1 ? a[n - 1] + (a[n - 1] - a[n - 2]) / 2 : a[0] + 0.5;
  return e;
}

// ---- trace kinds: prepare (decode, extent) and draw -----------------------------------
const TRACES = {
  scatter: {
    prepare(t, i, style) {
      const mode = t.mode ?? 'lines+markers', m = t.marker ?? {}, l = t.line ?? {};
      const color = l.color ?? (typeof m.color === 'string' ? m.color : null)
        ?? style.colorway[i % style.colorway.length];
      // Plotly's autorange: x padded (5% of the axis) only with markers, y always; markers
      // add 1.25 x their radius in px (scatter/calc.js)
      const markers = mode.includes('markers'), sizes = numbers(m.size);
      const big = sizes && sizes.length ? extent(sizes)[1] : (m.size ?? style.marker);
      return {x: numbers(t.x) ?? new Float64Array(0), y: numbers(t.y) ?? new Float64Array(0),
        lines: mode.includes('lines'), markers, color, pad: {x: markers, y: true},
        ppad: markers ? 0.625 * big : 0,
        width: l.width ?? style.line, dash: l.dash, shape: l.shape ?? 'linear',
        mcolor: typeof m.color === 'string' ? m.color : color, msize: m.size ?? style.marker,
        mcolors: Array.isArray(m.color) || m.color?.bdata ? m.color : null, m,
        mopacity: (m.opacity ?? 1), opacity: t.opacity ?? 1, msymbol: m.symbol};
    },
    extent(p, letter) { return extent(p[letter]); },
    draw(ctx, p, xa, ya) {
      ctx.globalAlpha = p.opacity;
      if (p.lines && p.width > 0) strokePath(ctx, p, xa, ya);
      if (p.markers) drawMarkers(ctx, p, xa, ya);
      ctx.globalAlpha = 1;
    },
  },
  heatmap: {
    prepare(t, i, style) {
      const g = grid(t.z), [lo, hi] = extent(g.a);
      return {...g, xe: edges(t.x, g.cols), ye: edges(t.y, g.rows), opacity: t.opacity ?? 1,
        zmin: t.zmin ?? lo, zmax: t.zmax ?? hi, scale: t.colorscale,
        lut: lut(t.colorscale, t.reversescale),
        // the cells' colours from a finer table: a scale with a hard step (the VAE grid's grey
        // separators at 0, white from 1/11) put values just past the step on the wrong side
        fine: lut(t.colorscale, t.reversescale, FINE), bar: t.showscale !== false && t.colorbar !== null,
        colorbar: t.colorbar ?? {}, pad: {x: false, y: false}, ppad: 0,
        texts: t.texttemplate === '%{text}' && Array.isArray(t.text) ? t.text : null, style,
        xgap: t.xgap ?? 0, ygap: t.ygap ?? 0};
    },
    extent(p, letter) { return extent(letter === 'x' ? p.xe : p.ye); },
    draw(ctx, p, xa, ya) {
      const img = new ImageData(p.cols, p.rows), span = (p.zmax - p.zmin) || 1;
      for (let k = 0; k < p.a.length; k++) {
        const v = p.a[k];
        if (!Number.isFinite(v)) continue;
        const c = Math.round((FINE - 1) * Math.min(1, Math.max(0, (v - p.zmin) / span))) * 4;
        img.data.set(p.fine.subarray(c, c + 4), k * 4);
      }
      const off = new OffscreenCanvas(p.cols, p.rows);
      off.getContext('2d').putImageData(img, 0, 0);
      const X0 = xa.p(p.xe[0]), X1 = xa.p(p.xe[p.cols]), Y0 = ya.p(p.ye[0]), Y1 = ya.p(p.ye[p.rows]);
      ctx.save();
      ctx.globalAlpha = p.opacity;
      ctx.imageSmoothingEnabled = false;
      ctx.translate(X0, Y0);
      ctx.scale((X1 - X0) / p.cols, (Y1 - Y0) / p.rows);  // row 0 is y[0]: drawn upwards
      ctx.drawImage(off, 0, 0);
      ctx.restore();
      if (p.xgap || p.ygap) cellGaps(ctx, p, xa, ya, Y0, Y1, X0, X1);
      if (p.texts) cellTexts(ctx, p, xa, ya, span);
    },
  },
};
TRACES.scattergl = TRACES.scatter;

// a heatmap's xgap / ygap: Plotly shrinks each cell by half the gap a side, showing the plot
// background; here lines of the gap's width in the background colour along every cell edge
function cellGaps(ctx, p, xa, ya, Y0, Y1, X0, X1) {
  ctx.save(); ctx.strokeStyle = p.style.plotbg ?? '#fff';
  for (const [gap, n, at, along] of [[p.xgap, p.cols, (k) => xa.p(p.xe[k]), 'x'], [p.ygap, p.rows, (k) => ya.p(p.ye[k]), 'y']]) {
    if (!gap) continue;
    ctx.lineWidth = gap; ctx.beginPath();
    for (let k = 0; k <= n; k++) {                // on whole pixels: crisp, as Plotly's
      const q = Math.round(at(k)) + (Math.round(gap) % 2 ? 0.5 : 0);
      if (along === 'x') { ctx.moveTo(q, Y0); ctx.lineTo(q, Y1); } else { ctx.moveTo(X0, q); ctx.lineTo(X1, q); }
    }
    ctx.stroke();
  }
  ctx.restore();
}
// a heatmap's cell texts (texttemplate "%{text}"): centred in each cell, in black or white
// whichever reads on the cell's colour (Plotly's "auto" text colour), sized to fit the cell
function cellTexts(ctx, p, xa, ya, span) {
  const cw = Math.abs(xa.p(p.xe[1]) - xa.p(p.xe[0])), ch = Math.abs(ya.p(p.ye[1]) - ya.p(p.ye[0]));
  const longest = Math.max(1, ...p.texts.flat().map((s) => String(s ?? '').length));
  const size = Math.max(6, Math.min(p.style.font, ch * 0.6, cw / (0.6 * longest)));
  for (let r = 0; r < p.rows; r++) {
    const row = p.texts[r] ?? [];
    for (let c = 0; c < p.cols; c++) {
      const s = row[c];
      if (s == null || s === '') continue;
      const v = p.a[r * p.cols + c], k = Number.isFinite(v) ? Math.round(255 * Math.min(1, Math.max(0, (v - p.zmin) / span))) * 4 : -1;
      const lum = k < 0 ? 255 : 0.299 * p.lut[k] + 0.587 * p.lut[k + 1] + 0.114 * p.lut[k + 2];
      const x = xa.p((p.xe[c] + p.xe[c + 1]) / 2), y = ya.p((p.ye[r] + p.ye[r + 1]) / 2);
      text(ctx, [String(s)], x, y, {size, style: p.style, color: lum < 140 ? '#fff' : '#222', xanchor: 'center', yanchor: 'middle'});
    }
  }
}

// one marker's outline added to the current path (Plotly's symbols by name or number)
function markerPath(ctx, symbol, X, Y, r) {
  if (symbol.startsWith('square') || symbol === '1') ctx.rect(X - r, Y - r, 2 * r, 2 * r);
  else if (symbol.startsWith('diamond') || symbol === '2') {
    ctx.moveTo(X, Y - r * 1.3); ctx.lineTo(X + r * 1.3, Y); ctx.lineTo(X, Y + r * 1.3); ctx.lineTo(X - r * 1.3, Y); ctx.closePath();
  } else if (symbol.startsWith('star') || symbol === '17') {   // five points, as Plotly's
    for (let k = 0; k < 10; k++) {
      const a = -Math.PI / 2 + k * Math.PI / 5, q = k % 2 ? 0.5 * r : 1.25 * r;
      if (k) ctx.lineTo(X + q * Math.cos(a), Y + q * Math.sin(a)); else ctx.moveTo(X + q * Math.cos(a), Y + q * Math.sin(a));
    }
    ctx.closePath();
  } else if (symbol === 'x' || symbol === 'cross') {
    const s = symbol === 'x' ? 0.8 * r : r;
    ctx.rect(X - s, Y - s / 3, 2 * s, 2 * s / 3); ctx.rect(X - s / 3, Y - s, 2 * s / 3, 2 * s);
  } else { ctx.moveTo(X + r, Y); ctx.arc(X, Y, r, 0, 2 * Math.PI); }
}

function strokePath(ctx, p, xa, ya) {
  ctx.beginPath();
  let pen = false, px = 0, py = 0;
  for (let i = 0; i < p.x.length; i++) {
    const X = xa.p(p.x[i]), Y = ya.p(p.y[i]);
    if (!Number.isFinite(X) || !Number.isFinite(Y)) { pen = false; continue; }
    if (!pen) ctx.moveTo(X, Y);
    else if (p.shape === 'hv') { ctx.lineTo(X, py); ctx.lineTo(X, Y); }
    else if (p.shape === 'vh') { ctx.lineTo(px, Y); ctx.lineTo(X, Y); }
    else ctx.lineTo(X, Y);
    pen = true; px = X; py = Y;
  }
  const d = Math.max(p.width, 3);
  ctx.setLineDash((DASH[p.dash] ?? []).map((k) => k * d));
  ctx.strokeStyle = p.color; ctx.lineWidth = p.width; ctx.lineJoin = 'round';
  ctx.stroke();
  ctx.setLineDash([]);
}
function drawMarkers(ctx, p, xa, ya) {
  const m = p.m, n = p.x.length, sizes = typeof p.msize === 'number' ? null : numbers(p.msize);
  let colors = null;
  if (p.mcolors && typeof (p.mcolors[0]) === 'string') colors = p.mcolors;
  else if (p.mcolors) {
    const v = numbers(p.mcolors), [lo, hi] = extent(v), table = lut(m.colorscale, m.reversescale);
    const c0 = m.cmin ?? lo, span = ((m.cmax ?? hi) - c0) || 1;
    colors = Array.from(v, (z) => { const k = Math.round(255 * Math.min(1, Math.max(0, (z - c0) / span))) * 4;
      return `rgb(${table[k]},${table[k + 1]},${table[k + 2]})`; });
  }
  const symbol = String(m.symbol ?? 'circle'), open = symbol.endsWith('-open');
  const outline = m.line?.width ? [m.line.color ?? '#444', m.line.width] : null;
  ctx.globalAlpha = p.opacity * p.mopacity;
  const shape = (X, Y, r) => markerPath(ctx, symbol, X, Y, r);
  const paint = (fill) => {
    if (open) { ctx.strokeStyle = fill; ctx.lineWidth = outline?.[1] ?? 1; ctx.stroke(); return; }
    ctx.fillStyle = fill; ctx.fill();
    if (outline) { ctx.strokeStyle = outline[0]; ctx.lineWidth = outline[1]; ctx.stroke(); }
  };
  ctx.beginPath();
  for (let i = 0; i < n; i++) {
    const X = xa.p(p.x[i]), Y = ya.p(p.y[i]), r = (sizes ? sizes[i] : p.msize) / 2;
    if (!Number.isFinite(X) || !Number.isFinite(Y)) continue;
    if (colors) { ctx.beginPath(); shape(X, Y, r); paint(colors[i]); } else shape(X, Y, r);
  }
  if (!colors) paint(p.mcolor);
  ctx.globalAlpha = 1;
}

// ---- axes --------------------------------------------------------------------------------
function niceTicks(lo, hi, target) {           // Plotly's auto ticks: dtick 1/2/5 x 10^k
  const rough = Math.abs(hi - lo) / target, base = 10 ** Math.floor(Math.log10(rough || 1));
  const dtick = base * ([1, 2, 5, 10].find((s) => s * base >= rough) ?? 10);
  const a = Math.min(lo, hi), b = Math.max(lo, hi), out = [];
  for (let v = Math.ceil(a / dtick - 1e-9) * dtick; v <= b + dtick * 1e-9; v += dtick) out.push(+v.toPrecision(12));
  return {values: out, dtick};
}
function formatter(ax, dtick, values) {
  const f = (ax.tickformat ?? '').replace('~', ''), m = f.match(/^(,)?(?:\.(\d+))?([f%ed])$/);
  const pre = ax.tickprefix ?? '', post = ax.ticksuffix ?? '';
  if (m) {
    const d = +(m[2] ?? (m[3] === 'd' ? 0 : 6));
    const fn = {f: (v) => v.toFixed(d), '%': (v) => `${(100 * v).toFixed(d)}%`,
      e: (v) => v.toExponential(d), d: (v) => Math.round(v).toLocaleString('en-US')}[m[3]];
    return (v) => pre + fn(v) + post;
  }
  const big = Math.max(...values.map(Math.abs), 0), e3 = big >= 10000 ? 3 * Math.floor(Math.log10(big) / 3) : 0;
  const unit = 10 ** e3, dec = Math.max(0, Math.ceil(-Math.log10(dtick / unit) - 1e-9));
  const si = {0: '', 3: 'k', 6: 'M', 9: 'G', 12: 'T'}[e3] ?? `e${e3}`;
  const trim = (s) => (s.includes('.') ? s.replace(/\.?0+$/, '') : s);   // Plotly: 1, 0.8
  return (v) => pre + (v === 0 ? '0' : trim((v / unit).toFixed(Math.min(dec, 10))).replace('-', '\u2212') + si) + post;
}
const SUP = {'-': '\u207b', 0: '\u2070', 1: '\u00b9', 2: '\u00b2', 3: '\u00b3', 4: '\u2074',
  5: '\u2075', 6: '\u2076', 7: '\u2077', 8: '\u2078', 9: '\u2079'};
const SI = {'-15': 'f', '-12': 'p', '-9': 'n', '-6': '\u03bc', '-3': 'm', 0: '', 3: 'k', 6: 'M', 9: 'G', 12: 'T'};
function decadeText(p, c) {                    // 10^p on a log axis: [label, size factor]
  const ef = c.exponentformat ?? 'B', pre = c.tickprefix ?? '', post = c.ticksuffix ?? '';
  const wrap = (s, k = 1) => [pre + s + post, k];
  if (c.tickformat) return wrap(formatter({tickformat: c.tickformat}, 1, [10 ** p])(+(10 ** p).toPrecision(6)));
  const beyond = p > 14 || p < -15;
  if (ef === 'power' || (beyond && ['B', 'SI'].includes(ef))) {   // Plotly: 1, 10, 10^p (x1.25)
    if (p === 0) return wrap('1', 1.25);
    if (p === 1) return wrap('10', 1.25);
    return wrap('10' + String(p).split('').map((ch) => SUP[ch]).join(''), 1.25);
  }
  if ((ef === 'e' || ef === 'E') && Math.abs(p) > 2) return wrap(`1${ef}${p > 0 ? '+' : '\u2212'}${Math.abs(p)}`);
  if (ef === 'none' || Math.abs(p) <= 3) return wrap(p < 0 ? (10 ** p).toFixed(-p) : String(10 ** p));
  const e3 = 3 * Math.round((p - 1) / 3);     // Plotly's hover-style rounding: 10k, 100k, 1M, 10μ
  const si = ef === 'B' && e3 === 9 ? 'B' : SI[e3];
  return wrap(String(10 ** (p - e3)) + si);
}
function ticks(ax) { return autoTicks(ax, 1); }   // [[value, label, size factor]]
// Plotly's target tick count (axes.prepTicks): nticks, else one per 40 px (y) or 80 px (x),
// 4 to 9, plus one
function tickCount(ax) {
  return ax.cfg.nticks || Math.min(9, Math.max(4, ax.len / (ax.letter === 'y' ? 40 : 80))) + 1;
}
// Plotly's numFormat with `round` decimals: half up, trailing zeros dropped; `exp`: the
// exponent its SI suffix names (the value is divided by 10^exp after rounding)
function plotlyNumber(v, round, exp = 0) {
  const e = 10 ** -round / 2, a = Math.abs(v);
  if (a < e) return '0';
  const m = (a + e) * 10 ** -exp, r = round + exp, s = String(m), dp = s.indexOf('.') + 1;
  const text = r <= 0 ? String(Math.floor(m)) : dp ? s.substr(0, dp + r).replace(/\.?0+$/, '') : s;
  return (v < 0 ? '\u2212' : '') + text + (exp ? (exp === 9 ? 'B' : SI[exp]) : '');
}
// Plotly's hover-precision label ("fakehover"): 2 digits past the value's own leading digit,
// plus 4; beyond 10^+-3 a multiple of 3 goes into an SI suffix (exponentformat "B": 120μ)
function hoverNumber(v) {
  const lead = Math.floor(Math.log10(Math.abs(v)) + 0.01);
  if (lead > 14 || lead < -15) return String(+v.toPrecision(6));
  return plotlyNumber(v, 2 - lead + 4, Math.abs(lead) > 3 ? 3 * Math.round((lead - 1) / 3) : 0);
}
// An overlaying log axis synced to its base's ticks: Plotly labels each value as formatLog
// does for the dtick its own range gets (axes.autoTicks): beyond 0.7 decades per tick, by
// value; within one decade ("L" ticks) by value, rounded as that dtick's labels; otherwise
// ("D1"/"D2") by value within -0.01..0.09 decades of a power of ten ("0.1000768" where a
// tick lands just past 0.1), else by its leading digit, small
function syncedLogLabels(ax, vals, thin) {
  const span = Math.abs(ax.r1 - ax.r0), nt = tickCount(ax), rough = span / nt * thin;
  if (rough > 0.7) return vals.map((v) => [v, hoverNumber(10 ** v)]);
  if (span < 1) {
    const dtick = niceTicks(10 ** ax.r0, 10 ** ax.r1, 1.5 * nt / thin).dtick;
    const round = 2 - Math.floor(Math.log10(dtick) + 0.01);
    return vals.map((v) => [v, plotlyNumber(10 ** v, round)]);
  }
  const nearDecade = (v) => ((v + 0.01) % 1 + 1) % 1 < 0.1;
  return vals.map((v) => (nearDecade(v) ? [v, hoverNumber(10 ** v)]
    : [v, String(Math.round(10 ** (v - Math.floor(v)))), 0.7]));
}
// Plotly's autotickangles [0, 30, 90]: x labels that would overlap turn 30 degrees (clockwise,
// starting at their tick) where ticks are at least ~2.5 label heights apart, else 90
function tickAngle(ax, labels, widest, len, size) {
  if (!labels.length) return 0;                  // no labels (showticklabels: false): no angle
  if (typeof ax.cfg.tickangle === 'number') return ax.cfg.tickangle;
  if (ax.letter !== 'x' || labels.length < 2) return 0;
  let gap = Infinity;
  for (let i = 1; i < labels.length; i++) gap = Math.min(gap, Math.abs(labels[i][0] - labels[i - 1][0]) / Math.abs(ax.r1 - ax.r0) * len);
  if (widest + 6 <= gap) return 0;
  return gap >= 2.5 * size + 2 ? 30 : 90;
}
function autoTicks(ax, thin) {
  const c = ax.cfg, log = ax.log;
  if (Array.isArray(c.tickvals)) {
    const text = c.ticktext ?? c.tickvals.map(formatter(c, 1, c.tickvals));
    // a category y axis (categories_as_numbers): Plotly labels every k-th category, k the
    // categories over how many labels fit at round(1.2 font sizes) apart (axes.autoTicks:
    // bigFont); x labels turn instead (tickAngle)
    const k = c.dlplay_categories && ax.letter === 'y'
      ? Math.ceil(c.dlplay_categories / Math.max(1, ax.len / Math.round(1.2 * (c.tickfont?.size ?? ax.tickSize ?? 12)))) : 1;
    return c.tickvals.map((v, i) => [log ? Math.log10(v) : v, String(text[i] ?? '')]).filter((_, i) => i % k === 0);
  }
  if (ax.base && (c.tickmode ?? 'sync') === 'sync' && !c.dtick) {   // Plotly's default for an
    const b = ax.base, vals = autoTicks(b, thin).map(([v]) => ax.r0 + (v - b.r0) / (b.r1 - b.r0) * (ax.r1 - ax.r0));
    const step = vals.length > 1 ? Math.abs(vals[1] - vals[0]) : 1;   // overlaying axis: its
    const fmt = formatter(c, step / 100, vals);                        // ticks at the base's
    if (ax.log) return syncedLogLabels(ax, vals, thin);
    return vals.map((v) => [v, fmt(v)]);
  }
  let values, dtick;
  const nt = tickCount(ax);
  if (log) {                                    // Plotly's log ticks (axes.autoTicks, formatLog)
    const lo = Math.min(ax.r0, ax.r1), hi = Math.max(ax.r0, ax.r1), rough = (hi - lo) / nt * thin;
    const decade = (p) => decadeText(p, c);
    // a whole number dtick: powers of ten that many decades apart (classroom log axes), as
    // are Plotly's own beyond 0.7 decades per tick, every ceil(rough) decades
    const every = typeof c.dtick === 'number' && c.dtick >= 1 ? Math.round(c.dtick) : rough > 0.7 ? Math.ceil(rough) : 0;
    if (every) {
      dtick = every; values = [];
      for (let k = Math.ceil(lo / dtick - 1e-9) * dtick; k <= hi + 1e-9; k += dtick) values.push(k);
      return values.map((k) => [k, ...decade(k)]);
    }
    if (hi - lo < 1) {                          // within a decade: linear ticks, labelled fully
      ({values, dtick} = niceTicks(10 ** lo, 10 ** hi, 1.5 * nt / thin));
      const fmt = formatter(c, dtick, values);
      return values.filter((v) => v > 0).map((v) => [Math.log10(v), fmt(v)]);
    }
    const digits = rough > 0.3 ? [1, 2, 5] : [1, 2, 3, 4, 5, 6, 7, 8, 9];   // "D2" / "D1"
    const out = [];
    for (let k = Math.floor(lo); k <= Math.ceil(hi); k++) {
      for (const d of digits) {
        const v = k + Math.log10(d);
        if (v < lo - 1e-9 || v > hi + 1e-9) continue;
        out.push(d === 1 ? [v, ...decade(k)] : [v, String(d), 0.7]);   // Plotly: small digits
      }
    }
    return out;
  }
  if (c.dtick && typeof c.dtick === 'number') {
    dtick = c.dtick; values = [];
    const t0 = c.tick0 ?? 0;
    for (let v = t0 + Math.ceil((ax.r0 - t0) / dtick - 1e-9) * dtick; v <= ax.r1 + 1e-9; v += dtick) values.push(+v.toPrecision(12));
  } else {
    ({values, dtick} = niceTicks(ax.r0, ax.r1, nt / thin));
  }
  const fmt = formatter(c, dtick, values);
  return values.map((v) => [v, fmt(v)]);
}

function buildAxes(spec, prepared) {
  const L = spec.layout, axes = {};
  const add = (id) => {
    if (axes[id]) return axes[id];
    const name = `${id[0]}axis${id.slice(1)}`, cfg = L[name] ?? {};
    return (axes[id] = {id, letter: id[0], cfg, log: cfg.type === 'log', lo: Infinity, hi: -Infinity, pad: false, ppad: 0, tickSize: spec.style.tick});
  };
  for (const k of Object.keys(L)) if (/^[xy]axis\d*$/.test(k)) add(k[0] + k.slice(5));
  add('x'); add('y');
  prepared.forEach(({t, p, kind}) => {
    for (const letter of ['x', 'y']) {
      const ax = add(t[`${letter}axis`] ?? letter);
      let [lo, hi] = kind.extent(p, letter);
      if (ax.log) [lo, hi] = [Math.log10(Math.max(lo, 1e-300)), Math.log10(hi)];
      if (Number.isFinite(lo)) {
        ax.lo = Math.min(ax.lo, lo); ax.hi = Math.max(ax.hi, hi);
        ax.pad ||= p.pad[letter]; ax.ppad = Math.max(ax.ppad, p.ppad);
      }
    }
  });
  for (const ax of Object.values(axes)) {
    const c = ax.cfg, base = c.overlaying ? add(c.overlaying).cfg : c;
    if (c.overlaying) ax.base = axes[c.overlaying];
    ax.domain = base.domain ?? [0, 1];
    ax.side = c.side ?? (ax.letter === 'x' ? 'bottom' : 'left');
    ax.anchor = c.anchor ?? (ax.letter === 'x' ? 'y' : 'x');
    if (Array.isArray(c.range) && c.range.length === 2 && c.range.every((v) => v != null)) [ax.r0, ax.r1] = c.range;
    else {
      let lo = ax.lo, hi = ax.hi;
      if (!Number.isFinite(lo)) [lo, hi] = ax.letter === 'x' ? [-1, 6] : [-1, 4];
      if (hi === lo) { lo -= 1; hi += 1; }
      const mode = ax.log ? 'normal' : c.rangemode ?? 'normal';   // Plotly: tozero, nonnegative
      if (mode === 'tozero') { lo = Math.min(lo, 0); hi = Math.max(hi, 0); }
      if (mode === 'nonnegative') { lo = Math.max(lo, 0); hi = Math.max(hi, lo + 1e-9); }
      ax.auto = {lo, hi, mode, reversed: c.autorange === 'reversed'};
      autoRange(ax, 500);                        // the axis length is known in place()
    }
    ax.visible = c.visible !== false;
    ax.labels = ax.visible && c.showticklabels !== false;
  }
  return axes;
}
// Plotly's autorange (axes.getAutoRange): the padded ends sit pad px inside the axis, pad =
// 5% of its length (if padded) + the markers' ppad: dv = (hi - lo) / (len - 2 pad),
// range = [lo - pad dv, hi + pad dv]; a zero end of rangemode tozero / nonnegative is tight
function autoRange(ax, len) {
  const {lo, hi, mode, reversed} = ax.auto;
  const pad = (ax.pad ? 0.05 * len : 0) + ax.ppad, dv = (hi - lo) / Math.max(1, len - 2 * pad);
  let r0 = lo - pad * dv, r1 = hi + pad * dv;
  if (mode !== 'normal' && lo === 0) r0 = 0;
  if (mode === 'tozero' && hi === 0) r1 = 0;
  [ax.r0, ax.r1] = reversed ? [r1, r0] : [r0, r1];
}
function place(axes, plot) {                   // pixel extent of each axis, its mapping
  for (const ax of Object.values(axes)) {
    const [d0, d1] = ax.domain;
    if (ax.letter === 'x') { ax.start = plot.l + d0 * plot.w; ax.len = (d1 - d0) * plot.w; }
    else { ax.start = plot.t + (1 - d1) * plot.h; ax.len = (d1 - d0) * plot.h; }
    if (ax.auto) autoRange(ax, ax.len);
  }
  for (const ax of Object.values(axes)) {       // scaleanchor: equal units (constrain "range")
    const other = axes[ax.cfg.scaleanchor];
    if (!other) continue;
    const ratio = ax.cfg.scaleratio ?? 1, k = ax.len / Math.abs(ax.r1 - ax.r0), ko = other.len / Math.abs(other.r1 - other.r0);
    const fit = (a, kk) => {                   // a gets kk px per unit: a wider range or,
      if (a.cfg.constrain === 'domain') {        // constrain "domain", a shorter axis
        const len = a.len * kk / (a.len / Math.abs(a.r1 - a.r0)); a.start += (a.len - len) / 2; a.len = len;
      } else { const c = (a.r0 + a.r1) / 2, h = (a.r1 - a.r0) / 2 * (a.len / Math.abs(a.r1 - a.r0)) / kk; a.r0 = c - h; a.r1 = c + h; }
    };
    if (k > ratio * ko) fit(ax, ratio * ko); else fit(other, k / ratio);
  }
  for (const ax of Object.values(axes)) {
    const {r0, r1, start, len} = ax, log = ax.log;
    ax.p = ax.letter === 'x'
      ? (v) => start + ((log ? Math.log10(v) : v) - r0) / (r1 - r0) * len
      : (v) => start + len - ((log ? Math.log10(v) : v) - r0) / (r1 - r0) * len;
    ax.t = ax.letter === 'x' ? (v) => start + (v - r0) / (r1 - r0) * len : (v) => start + len - (v - r0) / (r1 - r0) * len;
  }
}

// ---- the figure ----------------------------------------------------------------------------
function font(style, size, weight = '') { return `${weight} ${size}px ${style.family}`; }
function text(ctx, lines, x, y, {size, style, color, xanchor = 'left', yanchor = 'top', angle = 0}) {
  ctx.save();
  ctx.font = font(style, size); ctx.fillStyle = color ?? style.color;
  ctx.textAlign = {left: 'left', center: 'center', right: 'right'}[xanchor] ?? 'center';
  ctx.textBaseline = 'middle';
  ctx.translate(x, y); ctx.rotate(angle * Math.PI / 180);
  const lh = size * 1.25, h = lines.length * lh;
  const top = yanchor === 'top' ? 0 : yanchor === 'bottom' ? -h : -h / 2;
  lines.forEach((line, i) => ctx.fillText(line, 0, top + (i + 0.5) * lh));
  ctx.restore();
}
const labelWidth = (ctx, labels, tick, style) => Math.max(0, ...labels.map(([, s, k]) => widthOf(ctx, [s], Math.round(tick * (k ?? 1)), style)));
const widthOf = (ctx, lines, size, style) => { ctx.font = font(style, size); return Math.max(0, ...lines.map((l) => ctx.measureText(l).width)); };

function legendItems(spec, prepared) {
  const L = spec.layout, items = prepared.filter(({t}) => TRACES[t.type ?? 'scatter'] === TRACES.scatter
    && t.showlegend !== false).map(({t, p, i}) => ({name: plain(t.name ?? `trace ${i}`)[0], p}));
  for (const s of L.shapes ?? []) {            // shapes drawn in the legend (showlegend)
    if (s.showlegend) items.push({name: plain(s.name ?? '')[0], p: {lines: true, color: s.line?.color ?? '#444', width: s.line?.width ?? 2, dash: s.line?.dash}});
  }
  const show = L.showlegend ?? items.length > 1;
  return show ? items : [];
}

function draw(chart) {
  const {canvas, spec} = chart, ctx = canvas.getContext('2d'), L = spec.layout, style = spec.style;
  const W = chart.width, H = chart.height, dpr = window.devicePixelRatio || 1;
  const bw = Math.round(W * dpr), bh = Math.round(H * dpr);
  // a new bitmap size only when the size changed: assigning width/height reallocates the
  // bitmap and dirties layout, which the next chart's width read would then force
  if (canvas.width !== bw || canvas.height !== bh) { canvas.width = bw; canvas.height = bh; }
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, W, H);
  ctx.fillStyle = L.paper_bgcolor ?? 'white'; ctx.fillRect(0, 0, W, H);
  const prepared = spec.data.map((t, i) => { const kind = TRACES[t.type ?? 'scatter']; return {t, i, kind, p: kind.prepare(t, i, style)}; });
  const axes = buildAxes(spec, prepared);
  const tick = style.tick, fsize = style.font, legend = legendItems(spec, prepared);
  const horizontal = (L.legend?.orientation ?? 'v') === 'h';
  // automargin: room for tick labels, axis titles, title, colour bars and the legend; twice:
  // tick labels depend on the axis length, which the margins set (a synced axis's labels on
  // its base's ticks), so the second pass lays out for the plot area the first one found
  const m0 = {...style.margin, ...(L.margin ?? {})}, fixed = new Map(Object.values(axes).map((a) => [a, [a.r0, a.r1]]));
  let m, axisB, title, sub, bars, items, ltitle, tw, legendW, plot;
  for (let pass = 0; pass < 2; pass++) {
    m = {...m0};
    for (const [a, [r0, r1]] of fixed) if (!a.auto) [a.r0, a.r1] = [r0, r1];   // scaleanchor moved them
    axisB = 0;                                 // the bottom axes' labels and titles
    for (const ax of Object.values(axes)) {
      if (!ax.visible) continue;
      if (pass === 0) ax.len = Math.max(10, (ax.domain[1] - ax.domain[0]) * (ax.letter === 'x' ? W - m.l - m.r : H - m.t - m.b));
      const labels = ax.labels ? autoTicks(ax, 1) : [];
      const title = titleText(ax.cfg.title), tsize = ax.cfg.title?.font?.size ?? fsize;
      // a margin grows by what the labels need beyond the plot area (Plotly's automargin): a
      // subplot's inner axis has the gap between subplots, a secondary y axis the part of the
      // width its x domain leaves (estimated with the margins so far)
      const o = axes[ax.anchor], od = o ? o.domain : [0, 1];
      // automargin: false - the labels and title stay inside the margins as given (and a
      // legend below then takes its room from the margin: Plotly's reserved margin)
      const pushes = ax.cfg.automargin !== false;
      // no tick marks (ticks: ""): Plotly's push is the tick length and its gap smaller
      const atick = ax.cfg.tickfont?.size ?? tick, bare = ax.cfg.ticks === '' ? 7 + (atick - 12) * 2 / 7 : 0, pw = Math.max(10, W - m.l - m.r), ph = Math.max(10, H - m.t - m.b);
      if (ax.letter === 'y') {
        // Plotly's y.automargin push (fitted for 12-19 px ticks, 14-22 px titles, plotly.js 4)
        const need = labelWidth(ctx, labels, atick, style) + 16 + 0.2 * atick + (title ? tsize * 0.7 + 8 : 0) - bare;
        if (!pushes) continue;
        // the room inside the plot area beside the anchor axis: its domain's, and after the
        // first pass also what equal units (scaleanchor, constrain "domain") left free
        const placed = pass > 0 && o && o.start != null;
        const gapL = placed ? o.start - plot.l : od[0] * pw, gapR = placed ? plot.l + plot.w - o.start - o.len : (1 - od[1]) * pw;
        if (ax.side === 'right') m.r = Math.max(m.r, need - gapR); else m.l = Math.max(m.l, need - gapL);
      } else if (ax.side !== 'top') {
        const big = Math.max(1, ...labels.map(([, , k]) => k ?? 1)), lw = labelWidth(ctx, labels, atick, style);
        ax.angle = tickAngle(ax, labels, lw, pw * (ax.domain[1] - ax.domain[0]), atick);
        const rad = Math.abs(ax.angle) * Math.PI / 180;
        // turned labels: their height plus, as Plotly's automargin measured, ~half to one line
        // (flat labels and the title: fitted to Plotly's x.automargin push, 12-19 px ticks
        // and 14-22 px titles, as measured in plotly.js 4)
        const tall = ax.angle ? lw * Math.sin(rad) + atick * 1.25 * Math.cos(rad) + Math.min(atick, 12) * (0.5 + 0.5 * Math.sin(rad))
          : atick * 1.343 * big + 7.3 - (m0.b < 20 ? 2 : 0);   // 2 px less measured at b = 10 than at b >= 20
        if (!pushes) continue;
        const gapB = pass > 0 && o && o.start != null ? plot.t + plot.h - o.start - o.len : od[0] * ph;
        axisB = Math.max(axisB, (labels.length ? tall + 8 : 0) + (title ? tsize * 0.7 + 8 : 0) + 4 - bare - gapB);
        if (pass > 0 && !ax.angle && labels.length && ax.t) {
          // Plotly's automargin also makes room for the last flat label where it sticks out
          // past the plot area's right edge (but not when it already sticks out of the
          // figure): its half width plus up to 12 px (measured)
          const [v, s, k] = labels.reduce((a, b) => (ax.t(b[0]) > ax.t(a[0]) ? b : a));
          const half = widthOf(ctx, [s], Math.round(atick * (k ?? 1)), style) / 2, right = ax.t(v) + half;
          if (right > W - m.r && right <= W) m.r = Math.max(m.r, half + Math.min(12, m0.r));
        }
      }
    }
    title = titleText(L.title), sub = titleText(L.title?.subtitle);
    if (title) {
      // Plotly's title automargin (a title hung from the container's top): the title group's
      // height (with a subtitle it counts the title line twice, as measured in plotly.js 4)
      // from where it hangs; when that is more than the top margin it is reserved on top of
      // the axes' own 12 px push, else the margin stays as asked
      const T = typeof L.title === 'object' ? L.title : {}, size = T.font?.size ?? style.title;
      const subSize = T.subtitle?.font?.size ?? 0.7 * size, lines = plain(title).length;
      const pushing = sub && !T.subtitle?.dlplay_note;   // the canvas's own note takes no room
      const depth = (pushing ? 2 * size + 1.3 * subSize * plain(sub).length : 1.12 * size) + 1.3 * size * (lines - 1);
      const push = (1 - (T.y ?? 0.98)) * H + depth;
      if (T.automargin !== false && push > m.t) m.t = push + 12;
    }
    bars = prepared.filter(({p}) => p.bar);
    if (bars.length) {
      const b = bars[0].p, th = b.colorbar.thickness ?? 30, ttl = titleText(b.colorbar.title);
      const labels = niceTicks(b.zmin, b.zmax, 6).values.map(formatter(b.colorbar, niceTicks(b.zmin, b.zmax, 6).dtick, [b.zmax]));
      b.barW = th + 6 + widthOf(ctx, labels, fsize, style) + (ttl ? fsize * 1.25 + 4 : 0);
      // Plotly's automargin: the bar at x = 1.02 (2% of the plot width past its edge), the
      // margin the larger of the figure's and what the bar needs
      // plus its x padding (10 px a side), tick length and label gap
      m.r = Math.max(m.r, b.barW + 27 + 0.02 * (W - m.l - m.r));
    }
    ctx.font = font(style, fsize);
    items = legend.map((it) => ({...it, w: 40 + ctx.measureText(it.name).width + 8}));
    ltitle = plain(titleText(L.legend?.title) ?? '')[0] ?? '';
    tw = ltitle && items.length ? ctx.measureText(ltitle).width + 10 : 0;   // Plotly: left of row 1
    legendW = 0;
    if (items.length && horizontal) {              // Plotly: one row of entries as wide as each
      // if they fit the plot area's width (plotly.js legend/draw.js: _maxWidth = gs.w; an
      // entry is 40 px + its text, 5 px apart), else a grid of columns as wide as the widest
      const room = W - m.l - m.r, text = items.map((it) => it.w - 8);   // (a title does not count)
      const sum = text.reduce((a, w) => a + w, 0) + 5 * (items.length - 1);
      if (sum < room) {
        let x = tw;
        items.forEach((it) => { it.row = 0; it.x = x; x += it.w; });
        legendW = x;
      } else {
        const col = Math.max(...items.map((it) => it.w)), inner = Math.max(...text);
        const per = Math.max(1, Math.floor((room - inner) / (inner + 5)) + 1);
        items.forEach((it, k) => { it.row = Math.floor(k / per); it.x = tw + (k % per) * col; });
        legendW = tw + Math.min(per, items.length) * col;
      }
      // Plotly's legend height: rows of 1.3 font sizes + 3 px, plus ~10.5 px (measured)
      axisB += (Math.max(...items.map((it) => it.row)) + 1) * (fsize * 1.3 + 3) + 10.5;
    } else if (items.length) {                  // Plotly: the legend at x = 1.02, as the bar
      const need = Math.max(...items.map((it) => it.w)) + 10;
      m.r = bars.length ? m.r + need : Math.max(m.r, need + 0.02 * (W - m.l - m.r));
    }
    m.b = Math.max(m.b, axisB);                    // Plotly: the legend inside a margin asked for
    plot = {l: m.l, t: m.t, w: Math.max(10, W - m.l - m.r), h: Math.max(10, H - m.t - m.b)};
    if (legendW) {                                 // legend x / xanchor (paper), kept on the figure
      const lg = L.legend ?? {}, lx = lg.x ?? 0;
      const xa = lg.xanchor && lg.xanchor !== 'auto' ? lg.xanchor : lx >= 2 / 3 ? 'right' : lx > 1 / 3 ? 'center' : 'left';
      const shift = lx * plot.w - legendW * ({left: 0, center: 0.5, right: 1}[xa] ?? 0);
      plot.legendShift = Math.max(-m.l, Math.min(W - m.l - legendW, shift));
    }
    place(axes, plot);
  }
  const ax = Object.values(axes), anchorPos = (a) => {
    const o = axes[a.anchor];
    if (a.letter === 'x') return o ? (a.side === 'top' ? o.start : o.start + o.len) : plot.t + plot.h;
    return o ? (a.side === 'right' ? o.start + o.len : o.start) : plot.l;
  };
  const cross = (a) => axes[a.anchor] ?? {start: a.letter === 'x' ? plot.t : plot.l, len: a.letter === 'x' ? plot.h : plot.w};
  ctx.font = font(style, tick);
  const tickCache = new Map(ax.map((a) => [a, a.visible ? ticks(a) : []]));
  // grid
  ctx.lineWidth = 1;
  for (const a of ax) {
    if (!a.visible || a.cfg.showgrid === false || (a.cfg.overlaying && a.cfg.showgrid !== true)) continue;
    const o = cross(a);
    ctx.strokeStyle = a.cfg.gridcolor ?? style.grid; ctx.beginPath();
    for (const [v] of tickCache.get(a)) {
      const q = Math.round(a.t(v)) + 0.5;
      if (a.letter === 'x') { ctx.moveTo(q, o.start); ctx.lineTo(q, o.start + o.len); } else { ctx.moveTo(o.start, q); ctx.lineTo(o.start + o.len, q); }
    }
    ctx.stroke();
  }
  const shapes = (L.shapes ?? []).filter((s) => s.visible !== false);
  shapes.filter((s) => s.layer === 'below').forEach((s) => drawShape(ctx, s, axes, plot));
  for (const {t, p, kind} of prepared) {       // traces, clipped to their subplot
    const xa = axes[t.xaxis ?? 'x'], ya = axes[t.yaxis ?? 'y'];
    ctx.save(); ctx.beginPath(); ctx.rect(xa.start, ya.start, xa.len, ya.len); ctx.clip();
    kind.draw(ctx, p, xa, ya);
    ctx.restore();
  }
  shapes.filter((s) => s.layer !== 'below').forEach((s) => drawShape(ctx, s, axes, plot));
  // axis lines, ticks, labels, titles
  for (const a of ax) {
    if (!a.visible) continue;
    const pos = anchorPos(a), sign = (a.side === 'bottom' || a.side === 'right') ? 1 : -1, c = a.cfg;
    ctx.strokeStyle = c.linecolor ?? style.axis; ctx.lineWidth = 1; ctx.beginPath();
    if (c.showline) {
      if (a.letter === 'x') { ctx.moveTo(a.start, pos); ctx.lineTo(a.start + a.len, pos); } else { ctx.moveTo(pos, a.start); ctx.lineTo(pos, a.start + a.len); }
    }
    for (const [v] of tickCache.get(a)) {
      const q = Math.round(a.t(v)) + 0.5;
      if ((c.ticks ?? 'outside') === '') break;
      if (a.letter === 'x') { ctx.moveTo(q, pos); ctx.lineTo(q, pos + sign * 5); } else { ctx.moveTo(pos, q); ctx.lineTo(pos + sign * 5, q); }
    }
    ctx.stroke();
    let extentPx = 0;
    if (a.labels) {
      const labels = tickCache.get(a);
      const atick = a.cfg.tickfont?.size ?? tick, ang = a.letter === 'x' ? a.angle ?? 0 : 0;
      for (const [v, s, k] of labels) {        // k: Plotly's size factor (10^p, small digits)
        const q = a.t(v), size = Math.round(atick * (k ?? 1));
        if (ang) text(ctx, [s], q, pos + sign * 8, {size, style, xanchor: (ang > 0) === (sign > 0) ? 'left' : 'right', yanchor: 'middle', angle: ang});
        else if (a.letter === 'x') text(ctx, [s], q, pos + sign * 8, {size, style, xanchor: 'center', yanchor: sign > 0 ? 'top' : 'bottom'});
        else text(ctx, [s], pos + sign * 8, q, {size, style, xanchor: sign > 0 ? 'left' : 'right', yanchor: 'middle'});
      }
      const rad = Math.abs(ang) * Math.PI / 180, lw = labelWidth(ctx, labels, atick, style);
      extentPx = a.letter === 'x' ? (ang ? lw * Math.sin(rad) + atick * 1.25 * Math.cos(rad)
        : atick * 1.25 * Math.max(1, ...labels.map(([, , k]) => k ?? 1))) : lw;
    }
    const tt = titleText(c.title);
    if (tt) {
      const tsize = c.title?.font?.size ?? fsize, off = 8 + extentPx + (c.title?.standoff ?? 8);
      if (a.letter === 'x') text(ctx, plain(tt), a.start + a.len / 2, pos + sign * off, {size: tsize, style, xanchor: 'center', yanchor: sign > 0 ? 'top' : 'bottom'});
      else text(ctx, plain(tt), pos + sign * (off + tsize * 0.6), a.start + a.len / 2, {size: tsize, style, xanchor: 'center', yanchor: 'middle', angle: -90});
    }
  }
  // what was laid out, for the fidelity test's comparison with Plotly (plain numbers, cheap)
  canvas.__dlplay = {plot, legend: items.map((it) => it.name), axes: Object.fromEntries(ax.map((a) => [
    a.id, {range: [a.r0, a.r1], start: a.start, len: a.len, angle: a.angle ?? 0,
      ticks: a.labels ? tickCache.get(a).map(([v, s]) => [s, a.t(v)]) : []}]))};
  for (const b of bars) drawColorbar(ctx, b.p, plot, style, axes[b.t.yaxis ?? 'y']);
  for (const n of L.annotations ?? []) drawAnnotation(ctx, n, axes, plot, style);
  drawLegend(ctx, items, horizontal, plot, H, style, bars.length ? bars[0].p.barW + 10 : 0, tw ? ltitle : '');
  if (title) {
    const T = typeof L.title === 'object' ? L.title : {};
    const size = T.font?.size ?? style.title, x = (T.x ?? 0.02) * W, y = (1 - (T.y ?? 0.98)) * H;
    text(ctx, plain(title), x, y, {size, style, xanchor: T.xanchor ?? 'left', yanchor: T.yanchor ?? 'top'});
    if (sub) {                                 // Plotly: the subtitle under the title, smaller
      const S = T.subtitle?.font ?? {};
      text(ctx, plain(sub), x, y + size * 1.3 * plain(title).length,
           {size: S.size ?? Math.round(size * 0.7), color: S.color, style,
            xanchor: T.xanchor ?? 'left', yanchor: 'top'});
    }
  }
}

function refPos(ref, v, axes, plot, letter, logged = false) {  // "paper" / "x2 domain" / "x2" -> pixel
  // (logged: v is already log10 on a log axis, as Plotly's annotations; shapes are not)
  ref = ref ?? letter;
  if (ref === 'paper') return letter === 'x' ? plot.l + v * plot.w : plot.t + (1 - v) * plot.h;
  const a = axes[ref.split(' ')[0]];
  if (!a) return NaN;
  if (ref.endsWith('domain')) return letter === 'x' ? a.start + v * a.len : a.start + (1 - v) * a.len;
  return logged && a.log ? a.t(v) : a.p(v);
}
function drawShape(ctx, s, axes, plot) {
  const X = (v) => refPos(s.xref, v, axes, plot, 'x'), Y = (v) => refPos(s.yref, v, axes, plot, 'y');
  ctx.save(); ctx.globalAlpha = s.opacity ?? 1; ctx.beginPath();
  const type = s.type ?? (s.path ? 'path' : 'rect');
  if (type === 'path') {
    const tok = s.path.match(/[MLZmlz]|[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?/g) ?? [];
    for (let i = 0, cmd = 'M'; i < tok.length;) {
      if (/[MLZ]/i.test(tok[i])) { cmd = tok[i++].toUpperCase(); if (cmd === 'Z') { ctx.closePath(); continue; } }
      const px = X(+tok[i++]), py = Y(+tok[i++]);
      cmd === 'M' ? ctx.moveTo(px, py) : ctx.lineTo(px, py);
      if (cmd === 'M') cmd = 'L';
    }
  } else if (type === 'line') { ctx.moveTo(X(s.x0), Y(s.y0)); ctx.lineTo(X(s.x1), Y(s.y1)); }
  else if (type === 'circle') {
    const cx = (X(s.x0) + X(s.x1)) / 2, cy = (Y(s.y0) + Y(s.y1)) / 2;
    ctx.ellipse(cx, cy, Math.abs(X(s.x1) - X(s.x0)) / 2, Math.abs(Y(s.y1) - Y(s.y0)) / 2, 0, 0, 2 * Math.PI);
  } else ctx.rect(X(s.x0), Y(s.y0), X(s.x1) - X(s.x0), Y(s.y1) - Y(s.y0));
  if (s.fillcolor && type !== 'line') { ctx.fillStyle = s.fillcolor; ctx.fill(); }
  const line = s.line ?? {}, w = line.width ?? 2;
  if (w > 0 && line.color !== 'rgba(0,0,0,0)') {
    ctx.setLineDash((DASH[line.dash] ?? []).map((k) => k * Math.max(w, 3)));
    ctx.strokeStyle = line.color ?? '#444'; ctx.lineWidth = w; ctx.stroke();
  }
  ctx.restore();
}
function drawAnnotation(ctx, n, axes, plot, style) {
  if (n.visible === false) return;
  let x = refPos(n.xref, n.x ?? 0.5, axes, plot, 'x', true) + (n.xshift ?? 0), y = refPos(n.yref, n.y ?? 0.5, axes, plot, 'y', true) - (n.yshift ?? 0);
  const paperish = (r) => r === 'paper' || String(r).endsWith('domain');
  const auto = (ref, v, lo, mid, hi) => (!paperish(ref) ? mid : v <= 1 / 3 ? lo : v >= 2 / 3 ? hi : mid);
  let xanchor = n.xanchor ?? 'auto', yanchor = n.yanchor ?? 'auto';
  if (n.showarrow !== false) {
    const tx = x + (n.ax ?? -10), ty = y + (n.ay ?? -30);
    ctx.strokeStyle = n.arrowcolor ?? style.color; ctx.lineWidth = n.arrowwidth ?? 1;
    ctx.beginPath(); ctx.moveTo(x, y); ctx.lineTo(tx, ty); ctx.stroke();
    x = tx; y = ty; xanchor = xanchor === 'auto' ? 'center' : xanchor; yanchor = yanchor === 'auto' ? 'middle' : yanchor;
  }
  if (xanchor === 'auto') xanchor = auto(n.xref, n.x, 'left', 'center', 'right');
  if (yanchor === 'auto') yanchor = auto(n.yref, n.y, 'bottom', 'middle', 'top');
  text(ctx, plain(n.text), x, y, {size: n.font?.size ?? style.font, style, color: n.font?.color, xanchor, yanchor, angle: n.textangle ?? 0});
}
function drawColorbar(ctx, b, plot, style, ya) {
  // Plotly's bar: at x = 1.02 of the plot width plus its x padding (10 px), as long as the
  // plot less its y padding (10 px a side); one smooth gradient, zmax at the top
  const c = b.colorbar, th = c.thickness ?? 30, len = (c.len ?? 1) * plot.h - 20;
  const x = plot.l + (c.x ?? 1.02) * plot.w + 10, top = plot.t + ((1 - (c.y ?? 0.5)) * plot.h) - len / 2;
  const g = ctx.createLinearGradient(0, top + len, 0, top);
  for (let i = 0; i < 256; i += 15) g.addColorStop(i / 255, `rgb(${b.lut[i * 4]},${b.lut[i * 4 + 1]},${b.lut[i * 4 + 2]})`);
  g.addColorStop(1, `rgb(${b.lut[1020]},${b.lut[1021]},${b.lut[1022]})`);
  ctx.fillStyle = g; ctx.fillRect(x, top, th, len);
  ctx.strokeStyle = style.axis; ctx.lineWidth = 1; ctx.strokeRect(x, top, th, len);
  const {values, dtick} = niceTicks(b.zmin, b.zmax, Math.max(3, len / 40)), fmt = formatter(c, dtick, values);
  let wmax = 0;
  for (const v of values) {
    if (v < Math.min(b.zmin, b.zmax) || v > Math.max(b.zmin, b.zmax)) continue;
    const y = top + len * (1 - (v - b.zmin) / ((b.zmax - b.zmin) || 1));
    text(ctx, [fmt(v)], x + th + 4, y, {size: style.font, style, xanchor: 'left', yanchor: 'middle'});
    wmax = Math.max(wmax, widthOf(ctx, [fmt(v)], style.font, style));
  }
  const t = titleText(c.title);
  if (t) text(ctx, plain(t), x + th + 8 + wmax + style.font * 0.6, top + len / 2, {size: c.title?.font?.size ?? style.font, style, xanchor: 'center', yanchor: 'middle', angle: -90});
}
function drawLegend(ctx, items, horizontal, plot, H, style, barW, title) {
  const size = style.font, lh = size * 1.6;
  if (title && horizontal) {
    const rows = Math.max(...items.map((i) => i.row)) + 1;
    text(ctx, [title], plot.l + (plot.legendShift ?? 0), H - 6 - (rows - 0.5) * lh, {size, style, xanchor: 'left', yanchor: 'middle'});
  }
  items.forEach((it, k) => {
    const x = horizontal ? plot.l + (plot.legendShift ?? 0) + it.x : plot.l + plot.w + 10 + barW;
    const rows = horizontal ? Math.max(...items.map((i) => i.row)) + 1 : 0;
    const y = horizontal ? H - 6 - (rows - it.row - 0.5) * lh : plot.t + (k + 0.5) * lh;
    const p = it.p;
    ctx.save();
    if (p.lines) { ctx.strokeStyle = p.color; ctx.lineWidth = Math.min(p.width, 5); ctx.setLineDash((DASH[p.dash] ?? []).map((d) => d * 3)); ctx.beginPath(); ctx.moveTo(x + 5, y); ctx.lineTo(x + 35, y); ctx.stroke(); }
    if (p.markers) { ctx.globalAlpha = p.mopacity; ctx.fillStyle = p.mcolor; ctx.beginPath(); markerPath(ctx, String(p.msymbol ?? 'circle'), x + 20, y, Math.min(typeof p.msize === 'number' ? p.msize : 6, 16) / 2 + 1); ctx.fill(); }
    ctx.restore();
    text(ctx, [it.name], x + 40, y, {size, style, xanchor: 'left', yanchor: 'middle'});
  });
}

// ---- a live slot: a canvas chart or an html block, maybe fed by the frame route ----------
function slotOf(parentElement) {
  let slot = CHARTS.get(parentElement);
  if (!slot) {
    slot = {parent: parentElement, canvas: null, box: null, plot: null, spec: null, html: null, width: 0, gen: 0, frames: 0, observer: null};
    CHARTS.set(parentElement, slot);
  }
  return slot;
}
function canvasOf(slot) {                     // made on the first spec (reusing one an early
  if (slot.canvas) return slot.canvas;        // cleanup left behind)
  let canvas = slot.parent.querySelector('canvas[data-testid="dlplay-live-canvas"]');
  if (!canvas) {
    canvas = document.createElement('canvas');
    canvas.setAttribute('data-testid', 'dlplay-live-canvas');
    canvas.style.cssText = 'display:block;width:100%';
    slot.parent.appendChild(canvas);
  }
  slot.canvas = canvas;
  slot.observer = new ResizeObserver(() => {
    const w = canvas.clientWidth;
    if (w && w !== slot.width && slot.spec) { slot.width = w; draw(slot); }
  });
  slot.observer.observe(canvas);
  return canvas;
}
function boxOf(slot) {                        // made on the first html
  if (slot.box) return slot.box;
  let box = slot.parent.querySelector('div[data-testid="dlplay-live-html"]');
  if (!box) {
    box = document.createElement('div');
    box.setAttribute('data-testid', 'dlplay-live-html');
    slot.parent.appendChild(box);
  }
  return (slot.box = box);
}
// ---- figures the canvas does not draw (3-D, bars, fills...): plotly.js, loaded once per page
// from the installed plotly package (app.py's route, live/route.py), Plotly.react per frame
let plotlyUrl = null, plotlyLoading = null;
function loadPlotly() {
  if (window.Plotly) return Promise.resolve(window.Plotly);
  if (!plotlyUrl) return Promise.reject(new Error('no plotly.js URL'));
  if (!plotlyLoading) {
    plotlyLoading = new Promise((resolve, reject) => {
      const s = document.createElement('script');
      s.src = plotlyUrl; s.async = true;
      s.onload = () => (window.Plotly ? resolve(window.Plotly) : reject(new Error('no Plotly')));
      s.onerror = () => { plotlyLoading = null; reject(new Error('plotly.js did not load')); };
      document.head.appendChild(s);
    });
  }
  return plotlyLoading;
}
// not staticPlot: it leaves a 3-D scene blank; the div takes no pointer events instead
const PLOTLY_CONFIG = {displayModeBar: false, responsive: true, scrollZoom: false, doubleClick: false};
function plotOf(slot) {                       // made on the first plotly payload
  if (slot.plot) return slot.plot;
  let div = slot.parent.querySelector('div[data-testid="dlplay-live-plotly"]');
  if (!div) {
    div = document.createElement('div');
    div.setAttribute('data-testid', 'dlplay-live-plotly');
    div.style.cssText = 'display:block;width:100%;pointer-events:none';
    slot.parent.appendChild(div);
  }
  return (slot.plot = div);
}
function react(slot, text) {                  // one Plotly.react at a time; the latest frame wins
  slot.pendingFig = text;
  if (slot.plotting) return;
  slot.plotting = true;
  loadPlotly().then(async (Plotly) => {
    while (slot.pendingFig != null && !slot.gone) {
      const fig = JSON.parse(slot.pendingFig);
      slot.pendingFig = null;
      await Plotly.react(slot.plot, fig.data ?? [], fig.layout ?? {}, PLOTLY_CONFIG);
      slot.plot.dataset.frames = String(++slot.frames);
    }
  }).catch(() => { /* not loaded (yet): the next frame tries again */ })
    .finally(() => { slot.plotting = false; });
}

const show = (el, on) => { if (el && el.style.display !== (on ? 'block' : 'none')) el.style.display = on ? 'block' : 'none'; };
function paint(slot, payload) {               // {spec} on the canvas, {plotly} by plotly.js,
  if (payload.plotly != null) {               // or {html} in the box
    const div = plotOf(slot);
    show(div, true); show(slot.canvas, false); show(slot.box, false);
    slot.spec = null; slot.html = null;
    const css = `${payload.height ?? 450}px`;
    if (div.style.height !== css) div.style.height = css;
    react(slot, payload.plotly);
  } else if (payload.spec) {
    const spec = payload.spec, canvas = canvasOf(slot);
    if (canvas.style.display === 'none') slot.width = 0;
    show(canvas, true); show(slot.box, false); show(slot.plot, false);
    slot.spec = spec; slot.html = null;
    slot.height = spec.layout.height ?? 450;
    const css = `${slot.height}px`;
    if (canvas.style.height !== css) canvas.style.height = css;
    // the width: the ResizeObserver keeps it; the layout is read (forced) only on a chart's
    // first frame, not on every frame after React changed the page
    if (!slot.width) slot.width = canvas.clientWidth || 600;
    draw(slot);
    canvas.dataset.frames = String(++slot.frames);
  } else if (payload.html != null) {
    const box = boxOf(slot);
    show(box, true); show(slot.canvas, false); show(slot.plot, false);
    slot.spec = null;
    if (payload.html !== slot.html) { box.innerHTML = payload.html; slot.html = payload.html; }
    box.dataset.frames = String(++slot.frames);
  }
}

// ---- the frame route: one poller per page token, feeding that page's slots --------------
// live/push.py: GET poll.url answers {slots: {slot: payload}, next_ms, rerun}. One
// request in flight at a time; the next one next_ms after the previous one started.
const POLLS = (window.__dlplayPolls = window.__dlplayPolls || new Map());
const NEW_SLOTS = (window.__dlplayNewSlots = window.__dlplayNewSlots || new Map());   // url -> names
function listen(poll, slotName, slot, trigger) {
  let p = POLLS.get(poll.url);
  if (!p) {
    p = {url: poll.url, token: poll.token, slots: new Map(), next: poll.next_ms ?? 300, timer: null, stopped: false, asked: false, frames: 0};
    POLLS.set(poll.url, p);
    p.timer = setTimeout(() => fetchFrame(p), p.next);
  }
  if (poll.pause) p.pauseSel = poll.pause;
  if (poll.server) p.server = poll.server;    // the web process that ran this page's script
  watchPause();
  const entry = {slot};                       // this call's registration (an older call's
  p.slots.set(slotName, entry);               // cleanup may run after it: it keeps this one)
  p.trigger = trigger;
  p.asked = false;                            // a fresh run: it may ask for a rerun again
  return () => {
    if (p.slots.get(slotName) === entry) p.slots.delete(slotName);
    if (!p.slots.size) { p.stopped = true; clearTimeout(p.timer); if (POLLS.get(p.url) === p) POLLS.delete(p.url); }
  };
}
// The page's token goes in a header (never in the URL: access logs keep paths); the route binds
// it to this browser's dlplay_client cookie on first use (live/push.answer_request).
function clientCookie() {
  try {
    if (!/(^|;\s*)dlplay_client=/.test(document.cookie ?? '')) {
      const bytes = crypto.getRandomValues(new Uint8Array(16));
      const id = Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
      document.cookie = `dlplay_client=${id}; path=/; SameSite=Strict`;
    }
  } catch (e) { /* no cookies here: the route answers 404 and the page reruns instead */ }
}
// Pause acts at once, whatever Streamlit is doing: a click on a playing page's Pause button
// (seen before Streamlit's own handler) stops its poller and tells the frame route, which
// pauses the trainer before its next chunk. The click's rerun then shows the page paused;
// should Streamlit drop the click, the still-mounted component asks for that rerun itself.
const PAUSE_CHECK_MS = 3000;
function watchPause() {
  if (window.__dlplayPauseWatch || !document.addEventListener) return;
  window.__dlplayPauseWatch = true;
  document.addEventListener('click', (e) => {
    for (const p of [...POLLS.values()]) {
      if (p.pauseSel && e.target?.closest?.(p.pauseSel)) pauseNow(p);
    }
  }, true);
}
function pauseNow(p) {
  p.stopped = true; clearTimeout(p.timer);
  if (POLLS.get(p.url) === p) POLLS.delete(p.url);
  const url = p.url + (p.url.includes('?') ? '&' : '?') + 'pause=1';
  fetch(url, {cache: 'no-store', credentials: 'same-origin', keepalive: true,
         headers: p.token ? {'X-Dlplay-Token': p.token} : {}}).catch(() => {});
  document.body.dataset.dlplayPauses = String(+(document.body.dataset.dlplayPauses || 0) + 1);
  setTimeout(() => {                          // still mounted and the button still says Pause
    const b = document.querySelector(p.pauseSel);
    if (p.slots.size && p.trigger && b && /Pause/.test(b.innerText ?? '')) p.trigger('rerun', true);
  }, PAUSE_CHECK_MS);
}
// This page's script ran on one web process and another one answers its frame request, not
// knowing the page: the proxy sends this browser's requests to another replica (its own died,
// or came back and takes its browsers back) while the websocket stays where it was, so the
// frames would never come. A reload puts page and frames on one replica again, whose new
// session resumes the trainer from the replicas' shared checkpoints (live/resume.py). Reloads
// are at least 10 s apart (a flapping proxy cannot loop them quickly), a later one waits its
// turn: after a failover the restarted replica takes its browsers back seconds later.
const MOVED_RELOAD_MS = 10000;
function movedServer() {
  try {
    if (window.__dlplayReloading) return;
    const store = window.sessionStorage;
    const wait = +(store?.getItem('dlplayMovedAt') ?? 0) + MOVED_RELOAD_MS - Date.now();
    window.__dlplayReloading = true;
    setTimeout(() => {
      store?.setItem('dlplayMovedAt', String(Date.now()));
      // tells the next session this is a move, not a new tab (live/resume.py moved_here)
      document.cookie = 'dlplay_moved=1; path=/; max-age=60; SameSite=Strict';
      window.location.reload();
    }, Math.max(0, wait));
  } catch (e) { /* no storage or no location here: the page stays as it is */ }
}
async function fetchFrame(p) {
  const t0 = performance.now();
  let next = p.next;
  try {
    clientCookie();
    const r = await fetch(p.url, {cache: 'no-store', credentials: 'same-origin',
                                  headers: p.token ? {'X-Dlplay-Token': p.token} : {}});
    if (p.stopped) return;
    const server = r.headers?.get?.('X-Dlplay-Server') ?? null;
    if (r.status === 404 || r.status === 410) {
      p.stopped = true; POLLS.delete(p.url);
      if (r.status === 404 && p.server && server && server !== p.server) movedServer();
      return;
    }
    if (r.ok) {
      const frame = await r.json();
      if (p.stopped) return;
      next = frame.next_ms ?? next;
      for (const [name, payload] of Object.entries(frame.slots ?? {})) {
        const entry = p.slots.get(name);
        if (entry && payload) paint(entry.slot, payload);
      }
      if (frame.slots && Object.keys(frame.slots).length) document.body.dataset.dlplayFrames = String(++p.frames);
      // a slot no component shows yet (a part the page places from a later frame on, as the
      // attention page's curves once the run has steps): one rerun places it; asked once per
      // slot name and page, so a part a page never places cannot loop reruns
      const seen = NEW_SLOTS.get(p.url) ?? new Set();
      const fresh = Object.keys(frame.slots ?? {}).filter((n) => !p.slots.has(n) && !seen.has(n));
      if ((frame.rerun || fresh.length) && !p.asked && p.trigger) {
        fresh.forEach((n) => seen.add(n)); NEW_SLOTS.set(p.url, seen);
        p.asked = true; p.trigger('rerun', true);
      }
    } else next = Math.max(next, 1000);      // a server error: try again, slower
  } catch (e) {
    next = Math.max(2 * next, 1000);           // offline or restarting
  }
  if (!p.stopped) p.timer = setTimeout(() => fetchFrame(p), Math.max(0, next - (performance.now() - t0)));
}

export default function ({data, parentElement, setTriggerValue}) {
  const slot = slotOf(parentElement);
  const gen = ++slot.gen;
  if (data.poll?.plotly_js) plotlyUrl = data.poll.plotly_js;
  paint(slot, data);
  const stop = data.poll ? listen(data.poll, data.poll.slot, slot, setTriggerValue) : null;
  return () => {
    if (stop) stop();
    if (slot.gen !== gen) return;              // an older call's cleanup: keep the slot
    if (slot.observer) slot.observer.disconnect();
    if (slot.plot && window.Plotly) window.Plotly.purge(slot.plot);
    slot.gone = true;
    CHARTS.delete(parentElement);
  };
}
