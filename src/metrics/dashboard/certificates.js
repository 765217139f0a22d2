// The certificates panel: every certificate /stats lists, the PEM files of
// the config ("tls") and the sites with `acme = true` ("acme"), with its
// names, expiry (date and days left, marked under two weeks), source and
// the last ACME error. Redrawn on every read, like the rest of the live view.
import { el, table } from './dom.js';

const DAY_SECONDS = 86400;
// Under this many days left a certificate's row is marked: two weeks is
// when a renewal that keeps failing needs a person.
export const EXPIRING_DAYS = 14;

// The members of a /stats entry that have columns of their own.
const SHOWN = new Set(['names', 'file', 'not_after', 'expires_in_seconds', 'next_attempt',
  'last_error']);

// Any other member of an entry (OCSP's, say) gets a column named after it,
// its value as text (objects as JSON). This is the one place to show such a
// member better: its name -> (value) => text, e.g. `ocsp_next_update: unixTime`.
export const MORE_COLUMNS = {
  ocsp_this_update: unixTime,
  ocsp_next_update: unixTime,
  ocsp_next_fetch: unixTime,
};

// Unix seconds as "2026-12-17 14:03 UTC"; "-" for 0 (none yet).
export function unixTime(seconds) {
  if (!seconds) return '-';
  return new Date(seconds * 1000).toISOString().slice(0, 16).replace('T', ' ') + ' UTC';
}

const plural = (n, unit) => `${n} ${unit}${n === 1 ? '' : 's'}`;

// "83 days", "1 day", "23 hours", "expired".
export function timeLeft(seconds) {
  if (seconds <= 0) return 'expired';
  if (seconds < DAY_SECONDS) return plural(Math.floor(seconds / 3600), 'hour');
  return plural(Math.floor(seconds / DAY_SECONDS), 'day');
}

function asText(value) {
  if (value === null || value === undefined || value === '') return '-';
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}

// The entries of both sources, each with its source. A file's OCSP staple
// ("ocsp", by file) joins its file's entry.
function entries(stats) {
  const staples = new Map((stats.ocsp?.certificates ?? []).map((staple) => [staple.file, staple]));
  const withStaple = (entry) => {
    const { file, names, ...ocsp } = staples.get(entry.file) ?? {};
    return { ...entry, ...ocsp };
  };
  return [
    ...(stats.tls?.certificates ?? []).map((entry) => ({ source: 'file', entry: withStaple(entry) })),
    ...(stats.acme?.certificates ?? []).map((entry) => ({ source: 'acme', entry })),
  ];
}

function cell(field, text, attrs = {}) {
  return { text, attrs: { 'data-field': field, ...attrs } };
}

export function certificatesPanel(stats) {
  const listed = entries(stats);
  if (listed.length === 0) {
    return el('p', { class: 'note' }, ['No certificates: no [tls] certificate files and no site ' +
      'with acme = true.']);
  }
  const more = [...new Set(listed.flatMap(({ entry }) => Object.keys(entry)))]
    .filter((name) => !SHOWN.has(name));
  const rows = listed.map(({ source, entry }) => {
    const has = entry.not_after > 0;
    return [
      cell('names', entry.names.join(', ')),
      cell('not_after', has ? unixTime(entry.not_after) : 'none yet'),
      cell('days_left', has ? timeLeft(entry.expires_in_seconds) : '-', { class: 'n' }),
      cell('source', source, { title: entry.file }),
      cell('last_error', asText(entry.last_error), { class: entry.last_error ? 'error' : null }),
      cell('next_attempt', source === 'acme' ? unixTime(entry.next_attempt) : '-'),
      ...more.map((name) => cell(name, (MORE_COLUMNS[name] ?? asText)(entry[name]))),
    ];
  });
  const body = table(['names', 'expires', 'left', 'source', 'last ACME error', 'next ACME attempt',
    ...more.map((name) => name.replaceAll('_', ' '))], rows, { class: 'certificates' });
  listed.forEach(({ source, entry }, i) => {
    const row = body.tBodies[0].rows[i];
    row.dataset.certificate = entry.names[0] ?? '';
    row.dataset.source = source;
    const expiring = entry.not_after > 0 && entry.expires_in_seconds < EXPIRING_DAYS * DAY_SECONDS;
    row.classList.toggle('expiring', expiring);
  });
  return el('div', { class: 'scroll' }, [body]);
}
