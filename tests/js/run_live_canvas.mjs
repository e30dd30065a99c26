// Runs live/canvas.js in Node on figure specs (argv[2]: a JSON file, a list of specs)
// with a recording stand-in for the 2-D context; prints per spec the drawing calls made.
import {readFileSync} from 'node:fs';
import {pathToFileURL} from 'node:url';

const calls = {};
function context() {
  const state = {fillStyle: '#000000'};
  return new Proxy(state, {
    get(target, name) {
      if (name === 'measureText') return (s) => ({width: 7 * String(s).length});
      if (name in target) return target[name];
      return (...args) => {
        calls[name] = (calls[name] ?? 0) + 1;
        if (name === 'fillText') {
          (calls.texts = calls.texts ?? []).push(String(args[0]));
          // where: text() translates to the anchor, then writes at (0, line offset)
          (calls.placed = calls.placed ?? []).push([String(args[0]), ...(target.at ?? [0, 0])]);
        }
        if (name === 'translate') target.at = args;
        if (name === 'createLinearGradient') return {addColorStop() {}};
        return undefined;
      };
    },
    set(target, name, value) {                  // colours come back normalised, as in a browser
      target[name] = name === 'fillStyle' && !/^(#|rgb)/.test(String(value)) ? '#000000' : value;
      return true;
    },
  });
}
globalThis.document = {createElement: () => ({getContext: context, style: {}, dataset: {},
  setAttribute() {}, clientWidth: 640, width: 0, height: 0})};
globalThis.window = {devicePixelRatio: 2};
globalThis.ResizeObserver = class { observe() {} disconnect() {} };
globalThis.OffscreenCanvas = class { getContext() { return context(); } };
globalThis.ImageData = class { constructor(w, h) { this.data = new Uint8ClampedArray(w * h * 4); } };

const {default: mount} = await import(pathToFileURL(process.argv[3]).href);
const specs = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const out = specs.map((data) => {
  for (const k of Object.keys(calls)) delete calls[k];
  const parent = {querySelector: () => null, appendChild() {}};
  const cleanup = mount({data: {spec: data}, parentElement: parent});
  mount({data: {spec: data}, parentElement: parent});          // the next frame: same chart
  cleanup();
  return {...calls};
});
console.log(JSON.stringify(out));
