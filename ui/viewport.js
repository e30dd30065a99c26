// Reports the browser window's size and where the page's first large figure starts to Python
// (ui/viewport.py), so classroom figures can be sized to the screen below it. Sends only
// when a value differs from what Python already uses by more than a few pixels: a settled
// page costs no rerun, and a resized window reports once the resizing stops. Measures only
// an idle page (no rerun running: no stale element, no status widget) and sends a value only
// once two polls in a row agree: a layout caught in the middle of a rerun (a progress bar
// still shown, elements of an interrupted run) once made every report start a rerun that
// changed the layout again, ~10 reruns a second that also undid a tab switch.
const BUSY = '[data-stale="true"], [data-testid="stStatusWidget"], [data-testid="stSkeleton"]';
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
  let last = null;                            // the previous poll's measurement
  const differs = (a, b) => a.some((v, i) => Math.abs(v - b[i]) > 8);
  const report = () => {
    if (document.querySelector(BUSY)) { last = null; return; }
    const now = [window.innerWidth, window.innerHeight, figureTop(minHeight)];
    if (now[2] < 0) now[2] = known[2];        // no figure drawn (yet): keep the last one
    const steady = last !== null && !differs(now, last);
    last = now;
    if (steady && differs(now, known)) {
      known.splice(0, 3, ...now);
      setStateValue("size", now);
    }
  };
  const poll = setInterval(report, 400);      // figures appear after this mounts
  let timer = null;
  const onResize = () => { clearTimeout(timer); timer = setTimeout(report, 400); };
  // (a resize still needs the second, agreeing poll: at most ~0.8 s after it stops)
  window.addEventListener("resize", onResize);
  return () => { clearInterval(poll); clearTimeout(timer); window.removeEventListener("resize", onResize); };
}
