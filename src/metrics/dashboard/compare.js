// The compare view: save snapshots, reset the counters, and show two
// snapshots side by side as GET /stats/compare works them out (the same
// document `portico stats --compare` prints).
import { el, table } from './dom.js';
import { count, inUnit, ratio } from './format.js';

async function request(method, url) {
  const response = await fetch(url, { method, cache: 'no-store' });
  const body = await response.text();
  if (!response.ok) throw new Error(body.trim() || `${response.status} ${response.statusText}`);
  return body ? JSON.parse(body) : null;
}

function say(text, isError = false) {
  const message = document.getElementById('compare-message');
  message.textContent = text;
  message.classList.toggle('error', isError);
}

async function refreshList() {
  const list = await request('GET', '/stats/snapshots');
  const names = list.snapshots.map((s) => s.name);
  for (const [id, fallback] of [['compare-a', names.at(-2)], ['compare-b', names.at(-1)]]) {
    const select = document.getElementById(id);
    const keep = names.includes(select.value) ? select.value : fallback ?? names[0];
    select.replaceChildren(...list.snapshots.map((s) => el('option', { value: s.name }, [
      `${s.name} (${s.taken_at.replace('T', ' ').replace('Z', ' UTC')}, ${count(s.requests)} requests)`,
    ])));
    if (keep !== undefined) select.value = keep;
  }
  return list;
}

function run(label, summary) {
  return el('p', { class: 'run', 'data-run': label }, [
    el('strong', {}, [`${label}: ${summary.name}`]),
    ` taken ${summary.taken_at.replace('T', ' ').replace('Z', ' UTC')}, `,
    `${count(summary.requests)} requests in ${summary.seconds.toFixed(1)} s since the reset (or start)`,
  ]);
}

function locationTable(row, comparison) {
  const { a, b } = comparison;
  return el('section', { class: 'card', 'data-compare-location': row.name }, [
    el('h3', {}, [row.name]),
    table(['', a.name, b.name, `${b.name} / ${a.name}`],
      comparison.measures.map((m) => [
        m.label + (m.unit === 'seconds' ? ' (ms)' : ''),
        { text: inUnit(row.a[m.key], m.unit), attrs: { class: 'n', 'data-measure': m.key, 'data-side': 'a' } },
        { text: inUnit(row.b[m.key], m.unit), attrs: { class: 'n', 'data-measure': m.key, 'data-side': 'b' } },
        { text: ratio(row.ratio[m.key]), attrs: { class: 'n', 'data-measure': m.key, 'data-side': 'ratio' } },
      ])),
  ]);
}

export async function showComparison(a, b) {
  const comparison = await request('GET',
    `/stats/compare?a=${encodeURIComponent(a)}&b=${encodeURIComponent(b)}`);
  document.getElementById('comparison').replaceChildren(
    run('A', comparison.a),
    run('B', comparison.b),
    ...comparison.locations.map((row) => locationTable(row, comparison)),
    locationTable(comparison.total, comparison));
}

export function setUpCompare() {
  const guard = (action) => async (event) => {
    event?.preventDefault();
    try {
      await action();
    } catch (error) {
      say(error.message, true);
    }
  };
  document.getElementById('save-form').addEventListener('submit', guard(async () => {
    const name = document.getElementById('snapshot-name').value;
    const answer = await request('POST', `/stats/snapshot?name=${encodeURIComponent(name)}`);
    say(`Saved '${answer.saved.name}': ${count(answer.saved.requests)} requests in ` +
      `${answer.saved.seconds.toFixed(1)} s` +
      (answer.replaced ? `, replacing the earlier '${answer.saved.name}'` : '') +
      (answer.dropped ? `; the oldest snapshot, '${answer.dropped}', was dropped` : '') + '.');
    await refreshList();
  }));
  document.getElementById('reset').addEventListener('click', guard(async () => {
    await request('POST', '/stats/reset');
    say('Counters reset: run the load, then save a snapshot.');
  }));
  document.getElementById('compare-form').addEventListener('submit', guard(async () => {
    const a = document.getElementById('compare-a').value;
    const b = document.getElementById('compare-b').value;
    if (!a || !b) throw new Error('Save two snapshots first.');
    await showComparison(a, b);
  }));
}

// On entering the view: the list, and the two newest compared.
export async function enterCompare() {
  try {
    const list = await refreshList();
    if (list.snapshots.length >= 2) {
      await showComparison(document.getElementById('compare-a').value,
        document.getElementById('compare-b').value);
    } else {
      say('Save two snapshots to compare them.');
    }
  } catch (error) {
    say(error.message, true);
  }
}
