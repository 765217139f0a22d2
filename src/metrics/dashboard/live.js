// The live view: totals, then per location its numbers (since the start or
// the last reset, as /stats has them) and its charts (per second, from the
// history), then the upstream pools, the certificates and the workers.
// Redrawn on every read.
import { certificatesPanel } from './certificates.js';
import { histogramChart, lineChart } from './charts.js';
import { el, table } from './dom.js';
import { count, milliseconds, perSecond } from './format.js';
import { statusClasses } from './history.js';

// A number straight from /stats. data-stat names where it comes from, for
// the browser test that checks the page against /stats.
function figure(label, value, stat, unit = 'count') {
  const text = unit === 'ms' ? milliseconds(value) : count(value);
  return el('div', { class: 'figure' }, [
    el('span', { class: 'label' }, [label]),
    el('span', { class: 'value', 'data-stat': stat, 'data-unit': unit }, [text]),
  ]);
}

// A figure the page works out (a rate over the last second): no data-stat.
function derived(label, text) {
  return el('div', { class: 'figure' }, [
    el('span', { class: 'label' }, [label]),
    el('span', { class: 'value' }, [text]),
  ]);
}

function latest(points) {
  const point = [...(points ?? [])].reverse().find((p) => p[1] !== null);
  return point ? point[1] : null;
}

// The percentile of a histogram that has samples; null (shown "-") otherwise.
function percentile(histogram, which) {
  return histogram.count > 0 ? histogram[which] : null;
}

function timing(entry, histogram, short) {
  return [
    figure(`${short} p50`, percentile(entry[histogram], 'p50'), `${histogram}.p50`, 'ms'),
    figure(`${short} p99`, percentile(entry[histogram], 'p99'), `${histogram}.p99`, 'ms'),
  ];
}

// `span`: {now, windowMs}, the time axis every chart of the page shares.
function requestCharts(series, span, className) {
  const pick = (names) => names.map(([name, label]) => ({
    name, label, points: series[name] ?? [] }));
  return [
    lineChart({ ...span, title: 'requests/s by status', className: `${className} rate`,
      format: perSecond,
      series: pick([['rate', 'all'], ['2xx', '2xx'], ['3xx', '3xx'], ['4xx', '4xx'],
        ['5xx', '5xx']]) }),
    lineChart({ ...span, title: 'request time (ms)', className: `${className} request-time`,
      format: milliseconds, series: pick([['rt_p50', 'p50'], ['rt_p99', 'p99']]) }),
    lineChart({ ...span, title: 'upstream time (ms)', className: `${className} upstream-time`,
      format: milliseconds, series: pick([['urt_p50', 'p50'], ['urt_p99', 'p99']]) }),
    lineChart({ ...span, title: 'proxy overhead (ms)', className: `${className} overhead`,
      format: milliseconds, series: pick([['ovh_p50', 'p50'], ['ovh_p99', 'p99']]) }),
  ];
}

function totals(stats, history, span) {
  const t = stats.totals;
  const live = stats.workers.filter((w) => w.live).length;
  const series = history.series('total');
  return el('div', { 'data-scope': 'totals' }, [
    el('div', { class: 'figures' }, [
      figure('requests', t.requests, 'requests'),
      derived('req/s', perSecond(latest(series.rate))),
      ...['2xx', '3xx', '4xx', '5xx'].map((c) => figure(c, t.responses[c], `responses.${c}`)),
      figure('connections', t.connections_active, 'connections_active'),
      figure('accepted', t.connections_accepted, 'connections_accepted'),
      figure('workers live', live, 'workers.live'),
      figure('reloads', t.config_reloads.ok, 'config_reloads.ok'),
      figure('failed reloads', t.config_reloads.failed, 'config_reloads.failed'),
      figure('restarts', t.worker_restarts, 'worker_restarts'),
      figure('retries', t.upstream_retries, 'upstream_retries'),
      // TLS handshakes (zeros and "-" without [tls]): how many of each kind,
      // and the time from the accept to the end of the completed ones.
      ...['full', 'resumed', 'failed'].map((result) =>
        figure(`TLS ${result}`, t.tls_handshakes[result], `tls_handshakes.${result}`)),
      ...timing(t, 'tls_handshake_time', 'handshake'),
    ]),
    el('div', { class: 'charts' }, requestCharts(series, span, 'total')),
  ]);
}

// The response cache's hit ratio at a location with `cache`: the requests
// it answered (hit, stale, updating) among those it saw.
function cacheHits(entry) {
  const results = entry.cache ?? {};
  const seen = Object.values(results).reduce((sum, n) => sum + n, 0);
  if (seen === 0) return [];
  const answered = (results.hit ?? 0) + (results.stale ?? 0) + (results.updating ?? 0);
  return [derived('cache hits', `${(100 * answered / seen).toFixed(1)} %`)];
}

function location(entry, stats, history, span) {
  const series = history.series(`location:${entry.name}`);
  const classes = statusClasses(entry);
  // A location without requests (yet, or since the reset) keeps its
  // numbers but not a row of empty charts.
  const charts = entry.requests === 0
    ? el('p', { class: 'note' }, ['No requests since the start or the last reset.'])
    : el('div', { class: 'charts' }, [
      ...requestCharts(series, span, 'location'),
      histogramChart({ title: 'proxy overhead, since start or reset', className: 'histogram',
        histogram: entry.proxy_overhead, bounds: stats.bucket_bounds }),
    ]);
  return el('section', { class: 'card', 'data-location': entry.name }, [
    el('h3', {}, [entry.name === '-' ? '- (answered without a location)' : entry.name]),
    el('div', { class: 'figures' }, [
      figure('requests', entry.requests, 'requests'),
      derived('req/s', perSecond(latest(series.rate))),
      ...cacheHits(entry),
      ...Object.entries(classes).map(([c, n]) => figure(c, n, `class.${c}`)),
      ...timing(entry, 'request_duration', 'rt'),
      ...timing(entry, 'upstream_duration', 'urt'),
      ...timing(entry, 'proxy_overhead', 'ovh'),
    ]),
    charts,
  ]);
}

// A gauge's axis label: whole numbers as counts, halves as "0.5".
function gauge(value) {
  return Number.isInteger(value) ? count(value) : value.toFixed(1);
}

function stat(value, name, unit = 'count') {
  return { text: unit === 'ms' ? milliseconds(value) : count(value),
    attrs: { 'data-stat': name, 'data-unit': unit, class: 'n' } };
}

function upstream(entry, stats, history, span) {
  const servers = stats.upstream_servers.filter((s) => s.upstream === entry.name);
  const kinds = Object.keys(servers[0]?.errors ?? {});
  const rows = servers.map((s) => [
    s.server,
    stat(s.requests, 'requests'),
    stat(s.connections_opened, 'connections_opened'),
    stat(s.connections_reused, 'connections_reused'),
    stat(s.connections_idle, 'connections_idle'),
    ...kinds.map((kind) => stat(s.errors[kind], `errors.${kind}`)),
    stat(percentile(s.connect_time, 'p50'), 'connect_time.p50', 'ms'),
    stat(percentile(s.connect_time, 'p99'), 'connect_time.p99', 'ms'),
  ]);
  const body = table(['server', 'requests', 'opened', 'reused', 'idle',
    ...kinds.map((k) => `${k} errors`), 'connect p50', 'connect p99'], rows);
  servers.forEach((s, i) => {
    body.tBodies[0].rows[i].dataset.upstream = s.upstream;
    body.tBodies[0].rows[i].dataset.server = s.server;
  });
  const queue = history.series(`upstream:${entry.name}`);
  return el('section', { class: 'card', 'data-upstream-name': entry.name }, [
    el('h3', {}, [`upstream ${entry.name}`]),
    el('div', { class: 'figures' }, [
      figure('queued now', entry.queued, 'queued'),
      figure('queue 503s', entry.queue_timeouts, 'queue_timeouts'),
    ]),
    el('div', { class: 'scroll' }, [body]),
    el('div', { class: 'charts' }, [
      ...servers.map((s) => {
        const series = history.series(`server:${s.upstream} ${s.server}`);
        return lineChart({ ...span, title: `${s.server}: connections`, className: 'server',
          format: perSecond, series: [
            { name: 'opened', label: 'opened/s', points: series.opened ?? [] },
            { name: 'reused', label: 'reused/s', points: series.reused ?? [] },
            { name: 'idle', label: 'idle', points: series.idle ?? [] },
            { name: 'errors', label: 'errors/s', points: series.errors ?? [] },
          ] });
      }),
      lineChart({ ...span, title: 'queued requests', className: 'queue',
        format: gauge, series: [{ name: 'queued', label: 'queued', points: queue.queued ?? [] }] }),
    ]),
  ]);
}

function workers(stats) {
  return el('div', { class: 'scroll' }, [table(
    ['slot', 'worker', 'pid', 'live', 'requests', 'accepted', 'active'],
    stats.workers.map((w) => [w.slot, w.worker, w.pid, w.live ? 'yes' : 'no', count(w.requests),
      count(w.connections_accepted), count(w.connections_active)]))]);
}

export function renderLive(stats, history, now) {
  const span = { now, windowMs: history.span(now) };
  document.getElementById('totals').replaceChildren(totals(stats, history, span));
  document.getElementById('locations').replaceChildren(
    ...stats.locations
      .filter((entry) => entry.name !== '-' || entry.requests > 0)
      .map((entry) => location(entry, stats, history, span)));
  const pools = stats.upstreams.map((entry) => upstream(entry, stats, history, span));
  document.getElementById('servers').replaceChildren(
    ...(pools.length ? pools : [el('p', { class: 'note' }, ['No upstreams configured.'])]));
  document.getElementById('certificates').replaceChildren(certificatesPanel(stats));
  document.getElementById('workers').replaceChildren(workers(stats));
}
