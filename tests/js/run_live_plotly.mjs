// Runs live/canvas.js in Node (argv[2]: the JS) with a figure the canvas does not draw:
// the slot's payload is {plotly: figure JSON}; plotly.js is loaded once from the poll's
// plotly_js URL (a <script> whose load this stand-in completes) and every fetched frame is
// drawn with Plotly.react on one div, latest frame first. Prints what happened.
import {pathToFileURL} from 'node:url';

const noop = () => undefined;
const ctx = new Proxy({}, {get: (t, n) => (n === 'measureText' ? (s) => ({width: 7 * String(s).length}) : n in t ? t[n] : noop),
                           set: (t, n, v) => { t[n] = v; return true; }});
const scripts = [];
function element(tag) {
  return {tag, getContext: () => ctx, style: {}, dataset: {}, setAttribute(k, v) { this[k] = v; },
          clientWidth: 640, width: 0, height: 0, innerHTML: ''};
}
globalThis.document = {createElement: element, body: {dataset: {}}, head: {appendChild: (s) => scripts.push(s)}};
globalThis.window = {devicePixelRatio: 1};
globalThis.ResizeObserver = class { observe() {} disconnect() {} };

const reacts = [];
const Plotly = {react: async (div, data, layout, config) => { reacts.push({testid: div['data-testid'], data, layout, config}); await new Promise((r) => setTimeout(r, 1)); },
                purge: noop};
const fig = (z) => JSON.stringify({data: [{type: 'surface', z: [[z, 1], [2, 3]]}], layout: {height: 380, title: {text: `f${z}`}}});
const answers = [1, 2, 3].map((z) => ({slots: {surf: {plotly: fig(z), height: 380}}, next_ms: 5, rerun: false}));
let fetched = 0, done = false;
globalThis.fetch = async () => {
  fetched++;
  const a = answers.shift() ?? {slots: {}, next_ms: 5};
  return done ? {ok: false, status: 410, json: async () => ({})} : {ok: true, status: 200, json: async () => a};
};

const {default: mount} = await import(pathToFileURL(process.argv[2]).href);
const kids = [];
const parent = {kids, querySelector: () => null, appendChild(k) { kids.push(k); }};
const poll = {url: '/_dlplay/frame/T', slot: 'surf', next_ms: 5, plotly_js: '/_dlplay/plotly.min.js'};
mount({data: {plotly: fig(0), height: 380, poll}, parentElement: parent, setTriggerValue: noop});
const until = async (ok) => { for (let i = 0; i < 1000 && !ok(); i++) await new Promise((r) => setTimeout(r, 10)); };
await until(() => !answers.length);        // frames 1-3 arrived before plotly.js loaded
await new Promise((r) => setTimeout(r, 20));
const before = reacts.length;              // nothing drawn until plotly.js has loaded
window.Plotly = Plotly;
scripts.forEach((s) => s.onload());
await until(() => reacts.length >= 1 && !answers.length);
answers.push(...[4, 5].map((z) => ({slots: {surf: {plotly: fig(z), height: 380}}, next_ms: 5})));
await until(() => reacts.some((r) => r.layout.title.text === 'f5'));
done = true;
await until(() => window.__dlplayPolls.size === 0);
const div = kids[0];
console.log(JSON.stringify({scripts: scripts.map((s) => s.src), before, titles: reacts.map((r) => r.layout.title.text),
  types: reacts.map((r) => r.data[0].type), testid: div['data-testid'], height: div.style.height,
  frames: div.dataset.frames, staticPlot: reacts[0]?.config.staticPlot ?? false, modebar: reacts[0]?.config.displayModeBar, pointer: div.style.cssText, polls: window.__dlplayPolls.size, canvases: kids.length}));
