// Reads /stats every second into the history and redraws the live view;
// switches between the live and compare views by the URL's #fragment.
import { enterCompare, setUpCompare } from './compare.js';
import { clock } from './format.js';
import { History } from './history.js';
import { renderLive } from './live.js';

const REFRESH_MS = 1000;
const history = new History();
let reads = 0;

function status(text, isError) {
  const line = document.getElementById('status');
  line.textContent = text;
  line.classList.toggle('error', isError);
}

async function readStats() {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), 2 * REFRESH_MS);
  try {
    const response = await fetch('/stats', { cache: 'no-store', signal: abort.signal });
    if (!response.ok) throw new Error(`/stats answered ${response.status}`);
    return await response.json();
  } finally {
    clearTimeout(timer);
  }
}

// One tick; the next is scheduled after this one ends, so a slow answer
// never piles up requests.
async function tick() {
  const now = Date.now();
  try {
    const stats = await readStats();
    history.add(stats, now);
    renderLive(stats, history, now);
    reads += 1;
    document.body.dataset.reads = reads; // for the browser test: a fresh read is on the page
    status(`updated ${clock(new Date(now))}`, false);
  } catch (error) {
    history.gap(now);
    status(`cannot read /stats (${error.message}); retrying`, true);
  }
  setTimeout(tick, Math.max(0, REFRESH_MS - (Date.now() - now)));
}

function showView() {
  const compare = location.hash === '#compare';
  document.getElementById('live-view').hidden = compare;
  document.getElementById('compare-view').hidden = !compare;
  document.getElementById('tab-live').classList.toggle('active', !compare);
  document.getElementById('tab-compare').classList.toggle('active', compare);
  if (compare) enterCompare();
}

setUpCompare();
window.addEventListener('hashchange', showView);
showView();
tick();
