// The last five minutes of /stats, kept in the page: each read is turned
// into per-second figures against the read before it (rates from counter
// differences, percentiles from bucket differences), so the charts show
// what happened in each second rather than averages since the start.

export const WINDOW_MS = 5 * 60 * 1000;
// The charts' time axis at its shortest: a page open for a few seconds
// shows them spread over a minute, not squeezed against the right edge.
const SHORTEST_SPAN_MS = 60 * 1000;

// The q-quantile of the requests between two reads of one histogram, in
// seconds: the rule of /stats (linear inside the bucket, the largest value
// seen as the top of the last bucket), applied to the difference.
export function intervalPercentile(current, previous, bounds, q) {
  const counts = current.buckets.map((n, i) => n - (previous.buckets[i] ?? 0));
  if (counts.some((n) => n < 0)) return null; // a reset in between
  const total = counts.reduce((a, b) => a + b, 0);
  if (total === 0) return null;
  const rank = q * total;
  let below = 0;
  for (let i = 0; i < counts.length; i++) {
    if (counts[i] === 0) continue;
    if (below + counts[i] >= rank) {
      const low = i === 0 ? 0 : bounds[i - 1];
      const high = i < bounds.length ? bounds[i] : Math.max(current.max, low);
      return Math.min(low + ((high - low) * (rank - below)) / counts[i], current.max);
    }
    below += counts[i];
  }
  return current.max;
}

// A location's (or the totals') counts, whatever the shape: locations
// have exact codes ("404") and classes ("4xx"), totals have classes.
export function statusClasses(entry) {
  const classes = { '2xx': 0, '3xx': 0, '4xx': 0, '5xx': 0 };
  const codes = entry.codes ?? entry.responses ?? {};
  for (const [code, n] of Object.entries(codes)) {
    const name = code[0] + 'xx';
    if (name in classes) classes[name] += n;
  }
  return classes;
}

// One subject (a location, a server...): its last read and its series.
class Track {
  constructor() {
    this.previous = null;
    this.series = {};
  }
  push(t, values) {
    for (const [name, value] of Object.entries(values)) {
      (this.series[name] ??= []).push([t, value]);
    }
  }
  trim(oldest) {
    for (const points of Object.values(this.series)) {
      while (points.length && points[0][0] < oldest) points.shift();
    }
  }
}

function perSecond(current, previous, seconds) {
  return current >= previous ? (current - previous) / seconds : null;
}

function requestFigures(entry, previous, seconds, bounds) {
  const classes = statusClasses(entry);
  const before = statusClasses(previous);
  const figures = { rate: perSecond(entry.requests, previous.requests, seconds) };
  for (const name of Object.keys(classes)) {
    figures[name] = perSecond(classes[name], before[name], seconds);
  }
  for (const [prefix, histogram] of [
    ['rt', 'request_duration'],
    ['urt', 'upstream_duration'],
    ['ovh', 'proxy_overhead'],
  ]) {
    for (const [suffix, q] of [['p50', 0.5], ['p99', 0.99]]) {
      figures[`${prefix}_${suffix}`] = intervalPercentile(
        entry[histogram], previous[histogram], bounds, q);
    }
  }
  return figures;
}

function serverFigures(server, previous, seconds) {
  const errors = (s) => Object.values(s.errors ?? {}).reduce((a, b) => a + b, 0);
  return {
    opened: perSecond(server.connections_opened, previous.connections_opened, seconds),
    reused: perSecond(server.connections_reused, previous.connections_reused, seconds),
    idle: server.connections_idle,
    errors: perSecond(errors(server), errors(previous), seconds),
  };
}

export class History {
  constructor(windowMs = WINDOW_MS) {
    this.windowMs = windowMs;
    this.tracks = new Map();
    this.lastTime = null;
    this.firstTime = null;
  }

  // How far back the charts reach at `now`: the history kept, at least a
  // minute, at most the window.
  span(now) {
    const kept = this.firstTime === null ? 0 : now - this.firstTime;
    return Math.min(this.windowMs, Math.max(SHORTEST_SPAN_MS, kept));
  }

  track(key) {
    if (!this.tracks.has(key)) this.tracks.set(key, new Track());
    return this.tracks.get(key);
  }

  series(key) {
    return this.tracks.get(key)?.series ?? {};
  }

  // Adds the figures of one read of /stats taken at `t` (ms since the epoch).
  add(stats, t) {
    const seconds = this.lastTime === null ? 0 : (t - this.lastTime) / 1000;
    const bounds = stats.bucket_bounds;
    const subjects = [['total', stats.totals, (e, p, s) => requestFigures(e, p, s, bounds)]];
    for (const location of stats.locations) {
      subjects.push([`location:${location.name}`, location,
        (e, p, s) => requestFigures(e, p, s, bounds)]);
    }
    for (const server of stats.upstream_servers) {
      subjects.push([`server:${server.upstream} ${server.server}`, server, serverFigures]);
    }
    for (const upstream of stats.upstreams) {
      subjects.push([`upstream:${upstream.name}`, upstream, (e) => ({ queued: e.queued })]);
    }
    for (const [key, entry, figures] of subjects) {
      const track = this.track(key);
      if (track.previous && seconds > 0) track.push(t, figures(entry, track.previous, seconds));
      track.previous = entry;
      track.trim(t - this.windowMs);
    }
    this.lastTime = t;
    this.firstTime ??= t;
  }

  // A failed read: the lines break here, and the next read starts afresh.
  gap(t) {
    for (const track of this.tracks.values()) {
      for (const points of Object.values(track.series)) points.push([t, null]);
      track.previous = null;
    }
    this.lastTime = null;
  }
}
