// Runs live/canvas.js in Node (argv[2]: the JS): a playing page's slot polls its frame
// URL; a click on its Pause button (seen in the capture phase, before Streamlit's handler)
// stops the poller at once and sends <url>?pause=1; 3 s later the still-mounted component
// whose button still says Pause asks for a rerun. Prints what happened.
import {pathToFileURL} from 'node:url';

const listeners = [];
const button = {innerText: 'Pause'};
globalThis.document = {createElement: () => ({style: {}, dataset: {}, setAttribute() {}, innerHTML: ''}),
  body: {dataset: {}}, head: {appendChild() {}},
  addEventListener: (type, fn, capture) => listeners.push({type, fn, capture}),
  querySelector: (sel) => (sel === '.st-key-k__play button' ? button : null)};
globalThis.window = {devicePixelRatio: 1};
globalThis.ResizeObserver = class { observe() {} disconnect() {} };
const fetched = [];
globalThis.fetch = async (url) => { fetched.push(url); return {ok: true, status: 200, json: async () => ({slots: {note: {html: `<b>${fetched.length}</b>`}}, next_ms: 5})}; };
const triggers = [];
const {default: mount} = await import(pathToFileURL(process.argv[2]).href);
const parent = {querySelector: () => null, appendChild() {}};
mount({data: {html: '<b>0</b>', poll: {url: '/_dlplay/frame/T', slot: 'note', next_ms: 5, pause: '.st-key-k__play button'}},
       parentElement: parent, setTriggerValue: (n, v) => triggers.push([n, v])});
await new Promise((r) => setTimeout(r, 60));
const before = fetched.length;
const click = (inside) => listeners.filter((l) => l.type === 'click').forEach((l) => l.fn({target: {closest: (s) => (inside && s === '.st-key-k__play button' ? button : null)}}));
click(false);                               // a click elsewhere changes nothing
await new Promise((r) => setTimeout(r, 30));
const stillPolling = fetched.length > before;
click(true);                                // Pause
const atClick = fetched.length;
await new Promise((r) => setTimeout(r, 100));
const afterClick = fetched.slice(atClick - 1);
await new Promise((r) => setTimeout(r, 3100));
console.log(JSON.stringify({listeners: listeners.map((l) => [l.type, l.capture]), stillPolling,
  pauseSent: fetched.filter((u) => u.includes('pause=1')), afterClick, triggers,
  polls: window.__dlplayPolls.size, pauses: document.body.dataset.dlplayPauses}));
