// Reports the browser window's size to Python (viz/viewport.py) so classroom figures can be
// sized to the screen. Sends only when the size differs from what Python already uses by more
// than a few pixels: the first load at the default size costs no rerun, and a projector that
// is resized reports once the resizing stops.
export default function ({data, setStateValue}) {
  const known = (data && data.known) || [0, 0];
  const report = () => {
    const w = window.innerWidth, h = window.innerHeight;
    if (Math.abs(w - known[0]) > 16 || Math.abs(h - known[1]) > 16) {
      known[0] = w; known[1] = h;
      setStateValue("size", [w, h]);
    }
  };
  report();
  let timer = null;
  const onResize = () => { clearTimeout(timer); timer = setTimeout(report, 400); };
  window.addEventListener("resize", onResize);
  return () => { window.removeEventListener("resize", onResize); clearTimeout(timer); };
}
