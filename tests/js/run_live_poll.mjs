// Runs live/canvas.js's poller in Node (argv[2]: a spec JSON file, argv[3]: the JS):
// two slots of one page bound to a frame URL, a stand-in fetch answering three frames and
// then 410; prints what was fetched, painted and asked for.
import {readFileSync} from 'node:fs';
import {pathToFileURL} from 'node:url';

const noop = () => undefined;
const ctx = new Proxy({}, {get: (t, n) => (n === 'measureText' ? (s) => ({width: 7 * String(s).length}) : n in t ? t[n] : noop),
                           set: (t, n, v) => { t[n] = v; return true; }});
function element() {
  return {getContext: () => ctx, style: {}, dataset: {}, setAttribute() {}, clientWidth: 640,
          width: 0, height: 0, innerHTML: ''};
}
globalThis.document = {createElement: element, body: {dataset: {}}};
globalThis.window = {devicePixelRatio: 1};
globalThis.ResizeObserver = class { observe() {} disconnect() {} };
globalThis.OffscreenCanvas = class { getContext() { return ctx; } };
globalThis.ImageData = class { constructor(w, h) { this.data = new Uint8ClampedArray(w * h * 4); } };

const spec = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const answers = [
  {status: 200, body: {slots: {fig: {spec}, note: {html: '<b>1</b>'}}, next_ms: 5, rerun: false}},
  {status: 200, body: {slots: {note: {html: '<b>2</b>'}}, next_ms: 5, rerun: true}},
  {status: 200, body: {slots: {}, next_ms: 5, rerun: true}},
  {status: 410, body: {}},
];
const log = {fetched: [], inflight: 0, maxInflight: 0, triggers: []};
globalThis.fetch = async (url) => {
  log.fetched.push(url);
  log.maxInflight = Math.max(log.maxInflight, ++log.inflight);
  await new Promise((r) => setTimeout(r, 2));
  log.inflight--;
  const a = answers[Math.min(log.fetched.length - 1, answers.length - 1)];
  return {ok: a.status === 200, status: a.status, json: async () => a.body};
};

const {default: mount} = await import(pathToFileURL(process.argv[3]).href);
const parents = [0, 1].map(() => {
  const kids = [];
  return {kids, querySelector: () => null, appendChild(k) { kids.push(k); }};
});
const trigger = (name, value) => log.triggers.push([name, value]);
const poll = (slot) => ({url: '/_dlplay/frame/T', slot, next_ms: 5});
mount({data: {html: '<b>0</b>', poll: poll('note')}, parentElement: parents[0], setTriggerValue: trigger});
mount({data: {spec, poll: poll('fig')}, parentElement: parents[1], setTriggerValue: trigger});
await new Promise((r) => setTimeout(r, 200));
const box = parents[0].kids.find((k) => k.innerHTML !== undefined && k.innerHTML !== '');
const canvas = parents[1].kids[0];
const kinds = parents.map((p) => p.kids.length);
console.log(JSON.stringify({fetched: log.fetched.length, url: log.fetched[0], maxInflight: log.maxInflight,
  triggers: log.triggers, html: box ? box.innerHTML : null, canvasFrames: canvas.dataset.frames,
  pageFrames: document.body.dataset.dlplayFrames, polls: window.__dlplayPolls.size, kinds}));
