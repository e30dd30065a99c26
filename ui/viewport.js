// Reports the browser window's size and where the page's first large figure starts to Python
// (ui/viewport.py), so classroom figures can be sized to the screen below it. Sends only
// when a value differs from what Python already uses by more than a few pixels: a settled
// page costs no rerun, and a resized window reports once the resizing stops.
const CHARTS = '[data-testid="stMainBlockContainer"] .js-plotly-plot, ' +
               '[data-testid="stMainBlockContainer"] [class*="st-key-live-canvas"]';

function figureTop(minHeight) {             // document y of the topmost large chart, or -1
  let top = Infinity;
  for (const e of document.querySelectorAll(CHARTS)) {
    if (e.closest('[data-testid="stExpanderDetails"]')) continue;
    const r = e.getBoundingClientRect();
    if (r.height >= minHeight && r.width > 0) top = Math.min(top, r.top + window.scrollY);
  }
  return Number.isFinite(top) ? Math.round(top) : -1;
}

export default function ({data, setStateValue}) {
  const known = (data && data.known) || [0, 0, -1];
  const minHeight = (data && data.min_height) || 280;
  const report = () => {
    const now = [window.innerWidth, window.innerHeight, figureTop(minHeight)];
    if (now[2] < 0) now[2] = known[2];        // no figure drawn (yet): keep the last one
    if (now.some((v, i) => Math.abs(v - known[i]) > 8)) {
      known.splice(0, 3, ...now);
      setStateValue("size", now);
    }
  };
  const poll = setInterval(report, 400);      // figures appear after this mounts
  let timer = null;
  const onResize = () => { clearTimeout(timer); timer = setTimeout(report, 400); };
  window.addEventListener("resize", onResize);
  return () => { clearInterval(poll); clearTimeout(timer); window.removeEventListener("resize", onResize); };
}
