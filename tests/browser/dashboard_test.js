// The dashboard in a real browser: Debian's chromium, headless, driven by
// puppeteer-core, against the real portico binary with two workers, a
// static location and a proxied one in front of a small node:http app.
//
// Checks that the charts have data points, that every number the page
// takes from /stats matches /stats, that the certificates panel lists the
// certificate file and two ACME sites (one reusing a stored certificate,
// one whose CA cannot be reached) as /stats has them, that the compare
// view shows two snapshots as /stats/compare has them, and that the page
// loads nothing from outside the metrics listener. Screenshots go to the
// output folder.
//
//   node dashboard_test.js --portico build/portico --out build/tests/browser-output
//
// Exit 0 passed, 1 failed, 77 skipped (no chromium: ctest's SKIP_RETURN_CODE).
'use strict';

const assert = require('node:assert/strict');
const { spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const http = require('node:http');
const https = require('node:https');
const os = require('node:os');
const path = require('node:path');

const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
// The whole run, browser start included, must end well within ctest's limit.
const DEADLINE_MS = 90_000;

function option(name, fallback) {
  const at = process.argv.indexOf(name);
  return at > 0 && at + 1 < process.argv.length ? process.argv[at + 1] : fallback;
}

// The pids this test started (portico, chromium), for the watchdog to end.
const started = new Set();

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// Polls `condition` (async) until it holds; fails with `what` after `ms`.
async function waitFor(what, condition, ms = 10_000) {
  const end = Date.now() + ms;
  for (;;) {
    const value = await condition();
    if (value) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

// ---- the processes -----------------------------------------------------------

function startApp() {
  const server = http.createServer((request, response) => {
    response.setHeader('Content-Type', 'text/plain');
    response.end(`hello from the app: ${request.url}\n`);
  });
  // Node closes an idle kept-alive connection after 5 s by default; that
  // would change portico's idle count between the page's read and ours.
  server.keepAliveTimeout = 120_000;
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => resolve(server));
  });
}

// A self-signed ECDSA P-256 certificate for localhost, made for this run.
function makeCertificate(dir) {
  const made = spawnSync('openssl', ['req', '-x509', '-newkey', 'ec',
    '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2',
    '-keyout', path.join(dir, 'key.pem'), '-out', path.join(dir, 'cert.pem'),
    '-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost'], { encoding: 'utf8' });
  assert.equal(made.status, 0, `openssl req: ${made.stderr}`);
  return fs.readFileSync(path.join(dir, 'cert.pem'));
}

// The ACME storage with a stored certificate for stored.acme.test, valid
// 40 days: the ACME process reuses it without asking the CA.
function makeAcmeStorage(dir) {
  const storage = path.join(dir, 'acme');
  fs.mkdirSync(storage, { mode: 0o700 });
  const made = spawnSync('openssl', ['req', '-x509', '-newkey', 'ec',
    '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '40',
    '-keyout', path.join(storage, 'stored.acme.test.key'),
    '-out', path.join(storage, 'stored.acme.test.crt'),
    '-subj', '/CN=stored.acme.test', '-addext', 'subjectAltName=DNS:stored.acme.test'],
  { encoding: 'utf8' });
  assert.equal(made.status, 0, `openssl req: ${made.stderr}`);
  for (const file of fs.readdirSync(storage)) fs.chmodSync(path.join(storage, file), 0o600);
  return storage;
}

function startPortico(binary, dir, appPort) {
  fs.mkdirSync(path.join(dir, 'www/static'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'www/static/file.txt'), 'a file from disk\n'.repeat(64));
  const certificate = makeCertificate(dir);
  const storage = makeAcmeStorage(dir);
  const config = path.join(dir, 'portico.toml');
  fs.writeFileSync(config, `
[server]
listen = ["127.0.0.1:0"]
workers = 2

[metrics]
listen = "127.0.0.1:0"

[tls]
listen = ["127.0.0.1:0"]
certificates = [{ cert = "${path.join(dir, 'cert.pem')}", key = "${path.join(dir, 'key.pem')}" }]

[upstream.app]
servers = ["127.0.0.1:${appPort}"]
# Idle connections would otherwise close 4 s after the traffic, while the
# test compares the page's idle count with /stats.
idle_timeout = "120s"

[[location]]
name = "files"
prefix = "/static/"
root = "${path.join(dir, 'www')}"

[[location]]
name = "app"
prefix = "/"
proxy = "app"

# Nothing listens on port 1: new.acme.test's order fails (its last error),
# stored.acme.test serves its stored certificate.
[acme]
directory = "https://127.0.0.1:1/directory"
storage = "${storage}"

[[site]]
names = ["stored.acme.test"]
acme = true

[[site.location]]
prefix = "/"
respond = { status = 200, body = "stored\\n" }

[[site]]
names = ["new.acme.test"]
acme = true

[[site.location]]
prefix = "/"
respond = { status = 200, body = "new\\n" }
`);
  const child = spawn(binary, ['-c', config], { stdio: ['ignore', 'ignore', 'pipe'] });
  started.add(child.pid);
  let log = '';
  child.stderr.on('data', (chunk) => { log += chunk; });
  // The cleartext listener is logged before the TLS one ("... for TLS").
  const port = (what, after = '') => {
    const found = log.match(
      new RegExp(`${what} on 127\\.0\\.0\\.1:0 \\(port (\\d+)\\)${after}`));
    return found && Number(found[1]);
  };
  return { child, log: () => log, port, certificate };
}

// Ends a child by its pid: SIGTERM, then SIGKILL if it lingers.
async function stop(child) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  process.kill(child.pid, 'SIGTERM');
  const timer = setTimeout(() => process.kill(child.pid, 'SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
  started.delete(child.pid);
}

// ---- HTTP from the test ----------------------------------------------------

function request(port, method, target, agent) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path: target, agent }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => { body += chunk; });
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body }));
    });
    req.setTimeout(5000, () => req.destroy(new Error(`${method} ${target}: no answer in 5 s`)));
    req.on('error', reject);
    req.end();
  });
}

// GETs over TLS, each on a new connection. One agent without keep-alive
// keeps the session tickets, so after the first full handshake the others
// may resume.
async function tlsRequests(port, ca, count) {
  const agent = new https.Agent({ keepAlive: false, maxSockets: 1 });
  for (let i = 0; i < count; i++) {
    await new Promise((resolve, reject) => {
      const req = https.request({ host: '127.0.0.1', port, path: `/static/file.txt?tls=${i}`,
        servername: 'localhost', ca, agent }, (res) => {
        res.resume();
        res.on('end', () => (res.statusCode === 200 ? resolve()
          : reject(new Error(`https: ${res.statusCode}`))));
      });
      req.setTimeout(5000, () => req.destroy(new Error('https: no answer in 5 s')));
      req.on('error', reject);
      req.end();
    });
  }
  agent.destroy();
  // Plain HTTP on the TLS port: a failed handshake (and a clear-text 400).
  const plain = await request(port, 'GET', '/static/file.txt');
  assert.equal(plain.status, 400);
}

async function getJson(port, target) {
  const answer = await request(port, 'GET', target);
  assert.equal(answer.status, 200, `GET ${target}: ${answer.body}`);
  return JSON.parse(answer.body);
}

// Requests from `clients` keep-alive loops for `ms`, cycling through
// `paths`; returns how many got each status.
async function load(port, paths, ms, clients = 4) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: clients });
  const statuses = {};
  const end = Date.now() + ms;
  await Promise.all(Array.from({ length: clients }, async (_, client) => {
    for (let i = client; Date.now() < end; i++) {
      const answer = await request(port, 'GET', paths[i % paths.length], agent);
      statuses[answer.status] = (statuses[answer.status] ?? 0) + 1;
    }
  }));
  agent.destroy();
  return statuses;
}

// /stats once the counters stopped moving: a worker records a request
// just after its last byte, so the client can be a moment ahead.
async function settledStats(port) {
  let previous = null;
  return waitFor('the counters to settle', async () => {
    const stats = await getJson(port, '/stats');
    const same = previous && previous.totals.requests === stats.totals.requests;
    previous = stats;
    return same && stats;
  });
}

// ---- what the page shows ----------------------------------------------------

// Every number the page took from /stats, with where it came from.
function pageNumbers(page) {
  return page.$$eval('#live-view [data-stat]', (cells) => cells.map((cell) => {
    const scope = cell.closest('[data-server],[data-location],[data-upstream-name],[data-scope]');
    return {
      stat: cell.dataset.stat,
      unit: cell.dataset.unit,
      text: cell.textContent,
      location: scope.dataset.location,
      upstream: scope.dataset.upstream,
      server: scope.dataset.server,
      upstreamName: scope.dataset.upstreamName,
    };
  }));
}

const dig = (object, dotted) => dotted.split('.').reduce((o, key) => o?.[key], object);

// What /stats says for one page number; null where the page must show "-"
// (a percentile of an empty histogram).
function expected(stats, number) {
  let subject;
  if (number.server !== undefined) {
    subject = stats.upstream_servers.find(
      (s) => s.upstream === number.upstream && s.server === number.server);
  } else if (number.location !== undefined) {
    subject = stats.locations.find((l) => l.name === number.location);
    if (number.stat.startsWith('class.')) {
      const digit = number.stat.slice('class.'.length)[0];
      return Object.entries(subject.codes)
        .filter(([code]) => code[0] === digit)
        .reduce((sum, [, n]) => sum + n, 0);
    }
  } else if (number.upstreamName !== undefined) {
    subject = stats.upstreams.find((u) => u.name === number.upstreamName);
  } else if (number.stat === 'workers.live') {
    return stats.workers.filter((w) => w.live).length;
  } else {
    subject = stats.totals;
  }
  assert.ok(subject, `no /stats entry for ${JSON.stringify(number)}`);
  const histogram = number.stat.replace(/\.p(50|99)$/, '');
  if (histogram !== number.stat && dig(subject, histogram).count === 0) return null;
  return dig(subject, number.stat);
}

// Why a number the page shows differs from what /stats said, or null
// when it agrees.
function numberMismatch(stats, number) {
  const want = expected(stats, number);
  const where = JSON.stringify(number);
  if (want === undefined) return `${where}: not in /stats`;
  if (want === null) return number.text === '-' ? null : `${where}: /stats has no value`;
  if (number.unit === 'ms') {
    const shown = Number(number.text);
    const ms = want * 1000;
    // The page rounds to two or three significant digits.
    return Math.abs(shown - ms) <= Math.max(0.0006, ms * 0.006) ? null
      : `${where}: /stats has ${ms} ms`;
  }
  const shown = Number(number.text.replaceAll(',', ''));
  return shown === want ? null : `${where}: /stats has ${want}`;
}

// The page's numbers once they agree with /stats. The page reads /stats
// at its own moment, and a gauge (idle upstream connections) may move
// without traffic, so each number must equal what /stats said just before
// or just after the page's read; a page that shows a wrong number fails
// every round.
async function pageMatchingStats(page, metricsPort) {
  let mismatches = [];
  for (let round = 0; round < 5; round++) {
    const before = await settledStats(metricsPort);
    await waitForFreshRead(page);
    const numbers = await pageNumbers(page);
    const after = await getJson(metricsPort, '/stats');
    mismatches = numbers.map((number) => numberMismatch(before, number)
      && numberMismatch(after, number)).filter(Boolean);
    if (mismatches.length === 0) return { stats: before, numbers };
  }
  assert.fail(`the page disagrees with /stats:\n${mismatches.join('\n')}`);
}

// The number of points a chart's series drew, and how many line segments.
function seriesPoints(page, selector) {
  return page.$eval(selector, (group) => ({
    points: Number(group.dataset.points),
    lines: group.querySelectorAll('polyline').length,
  }));
}

async function waitForFreshRead(page) {
  const before = await page.$eval('body', (body) => Number(body.dataset.reads ?? 0));
  await page.waitForFunction((n) => Number(document.body.dataset.reads ?? 0) >= n + 2,
    { timeout: 10_000 }, before);
}

// On a phone's width the page does not scroll sideways: every chart and
// number fits the screen, or sits in a table box that scrolls by itself
// (`.scroll`) and fits the screen.
async function checkPhoneLayout(page) {
  const layout = await page.evaluate(() => {
    const width = document.documentElement.clientWidth;
    const past = (element) => {
      const box = element.getBoundingClientRect();
      return box.left < -1 || box.right > width + 1;
    };
    const wider = [...document.querySelectorAll('#live-view svg, #live-view [data-stat]')]
      .filter((element) => element.getClientRects().length > 0)
      .map((element) => element.closest('.scroll') ?? element)
      .filter(past)
      .map((element) => `${element.tagName}.${element.className?.baseVal ?? element.className}` +
        `[${element.dataset?.stat ?? ''}]`);
    return { width, scrollWidth: document.documentElement.scrollWidth, wider };
  });
  assert.ok(layout.scrollWidth <= layout.width, `phone: scrolls sideways ${JSON.stringify(layout)}`);
  assert.equal(layout.wider.length, 0, `phone: past the screen's edge ${JSON.stringify(layout)}`);
}

// ---- the test ---------------------------------------------------------------

async function checkLiveView(page, metricsPort, trafficPort, tls) {
  // A second of traffic before and after the page's first reads, so each
  // series gets several per-second points.
  const [statuses] = await Promise.all([
    load(trafficPort, ['/static/file.txt', '/api/items', '/static/missing.txt', '/api/other'],
      4000),
    tlsRequests(tls.port, tls.ca, 5),
  ]);
  assert.ok(statuses[200] > 100, `traffic: ${JSON.stringify(statuses)}`);
  assert.ok(statuses[404] > 10, `traffic: ${JSON.stringify(statuses)}`);
  const stats = await settledStats(metricsPort);
  const handshakes = stats.totals.tls_handshakes;
  assert.equal(handshakes.full + handshakes.resumed, 5, JSON.stringify(handshakes));
  assert.ok(handshakes.full >= 1 && handshakes.failed === 1, JSON.stringify(handshakes));
  assert.equal(stats.totals.tls_handshake_time.count, 5);
  const { numbers } = await pageMatchingStats(page, metricsPort);
  const locations = new Set(numbers.map((n) => n.location).filter(Boolean));
  // The ACME sites' locations (no traffic) are listed too.
  assert.deepEqual([...locations].sort(), ['app', 'files', 'new.acme.test/', 'stored.acme.test/']);
  assert.ok(numbers.some((n) => n.server !== undefined), 'no upstream server row');
  for (const stat of ['tls_handshakes.full', 'tls_handshakes.resumed', 'tls_handshakes.failed',
    'tls_handshake_time.p50', 'tls_handshake_time.p99']) {
    assert.ok(numbers.some((n) => n.stat === stat && n.text !== '-'), `no ${stat} on the page`);
  }
  console.log(`  ${numbers.length} numbers on the page match /stats ` +
    `(TLS handshakes ${JSON.stringify(stats.totals.tls_handshakes)})`);

  for (const [selector, what] of [
    ['[data-scope="totals"] svg.rate g[data-series="rate"]', 'total requests/s'],
    ['[data-location="app"] svg.rate g[data-series="rate"]', 'app requests/s'],
    ['[data-location="files"] svg.rate g[data-series="4xx"]', 'files 404s/s'],
    ['[data-location="app"] svg.request-time g[data-series="rt_p99"]', 'app request time p99'],
    ['[data-location="app"] svg.upstream-time g[data-series="urt_p50"]', 'app upstream time p50'],
    ['[data-location="app"] svg.overhead g[data-series="ovh_p50"]', 'app overhead p50'],
    ['[data-upstream-name="app"] svg.server g[data-series="reused"]', 'reused connections/s'],
  ]) {
    const drawn = await seriesPoints(page, selector);
    assert.ok(drawn.points >= 2 && drawn.lines >= 1, `${what}: ${JSON.stringify(drawn)}`);
  }
  const fileOverhead = await seriesPoints(page,
    '[data-location="files"] svg.overhead g[data-series="ovh_p50"]');
  assert.equal(fileOverhead.points, 0, 'files from disk have no proxy overhead');

  const app = stats.locations.find((l) => l.name === 'app');
  const bars = await page.$$eval('[data-location="app"] svg.histogram rect.bar',
    (rects) => rects.map((r) => Number(r.dataset.count)));
  assert.ok(bars.length >= 1, 'no overhead histogram bars');
  assert.equal(bars.reduce((a, b) => a + b, 0), app.proxy_overhead.count,
    'the histogram holds every proxied request');
  console.log('  charts have data points; the overhead histogram holds every proxied request');
}

// The certificates panel's rows: each one's name, source, whether it is
// marked as expiring, the colour of its days left, and its cells by field.
function certificateRows(page) {
  return page.$$eval('#certificates tr[data-certificate]', (rows) => rows.map((row) => ({
    name: row.dataset.certificate,
    source: row.dataset.source,
    expiring: row.classList.contains('expiring'),
    colour: getComputedStyle(row.querySelector('[data-field="days_left"]')).color,
    cells: Object.fromEntries([...row.querySelectorAll('[data-field]')].map(
      (cell) => [cell.dataset.field, cell.textContent])),
  })));
}

const utc = (seconds) =>
  new Date(seconds * 1000).toISOString().slice(0, 16).replace('T', ' ') + ' UTC';

async function checkCertificates(page, metricsPort) {
  const stats = await waitFor('the failed ACME order in /stats', async () => {
    const read = await getJson(metricsPort, '/stats');
    const failed = read.acme?.certificates.find((c) => c.names[0] === 'new.acme.test');
    return failed?.last_error && read;
  });
  await waitForFreshRead(page);
  const rows = await certificateRows(page);
  assert.deepEqual(rows.map((r) => `${r.name} ${r.source}`),
    ['localhost file', 'stored.acme.test acme', 'new.acme.test acme']);
  const [file, stored, failed] = rows;
  const entryOf = (source, name) => (source === 'file' ? stats.tls : stats.acme).certificates
    .find((c) => c.names[0] === name);
  for (const row of [file, stored]) {
    const entry = entryOf(row.source, row.name);
    assert.ok(entry.not_after > Date.now() / 1000, JSON.stringify(entry));
    assert.equal(row.cells.not_after, utc(entry.not_after), row.name);
    // The page read /stats a moment apart from the test: a day may tick over.
    const days = Math.floor(entry.expires_in_seconds / 86400);
    const spelt = (n) => `${n} day${n === 1 ? '' : 's'}`;
    assert.ok([spelt(days), spelt(days - 1)].includes(row.cells.days_left),
      `${row.name}: ${row.cells.days_left} (/stats: ${entry.expires_in_seconds} s)`);
    assert.equal(row.cells.last_error, '-');
  }
  // The file's certificate (2 days) is marked, in the warning colour; the stored one (40) is not.
  assert.ok(file.expiring && !stored.expiring && !failed.expiring, JSON.stringify(rows));
  assert.notEqual(file.colour, stored.colour);
  assert.equal(stored.cells.next_attempt, utc(entryOf('acme', 'stored.acme.test').next_attempt));
  assert.equal(failed.cells.not_after, 'none yet');
  const failedEntry = entryOf('acme', 'new.acme.test');
  assert.equal(failed.cells.last_error, failedEntry.last_error);
  assert.ok(failed.cells.last_error.length > 0);

  // A member the panel does not know (OCSP's, added later) gets a column of
  // its own: the page's module renders /stats with one more member.
  const more = await page.evaluate(async (read) => {
    const { certificatesPanel } = await import('/certificates.js');
    read.acme.certificates[0].ocsp_status = 'good';
    const panel = certificatesPanel(read);
    return {
      headers: [...panel.querySelectorAll('th')].map((th) => th.textContent),
      cells: [...panel.querySelectorAll('td[data-field="ocsp_status"]')].map((td) => td.textContent),
    };
  }, stats);
  assert.ok(more.headers.includes('ocsp status'), JSON.stringify(more));
  assert.deepEqual(more.cells, ['-', 'good', '-']);
  console.log(`  the certificates panel lists ${rows.length} certificates as /stats has them ` +
    `(last ACME error: ${failed.cells.last_error})`);
}

async function checkCompareView(page, metricsPort, trafficPort) {
  // Run A: what the live view saw, saved over HTTP.
  const saved = await request(metricsPort, 'POST', '/stats/snapshot?name=mixed');
  assert.equal(saved.status, 201, saved.body);

  // Run B through the page: reset, files only, save.
  await page.goto(`http://127.0.0.1:${metricsPort}/#compare`);
  await page.waitForSelector('#compare-view:not([hidden])');
  await page.click('#reset');
  await page.waitForFunction(
    () => document.getElementById('compare-message').textContent.startsWith('Counters reset'));
  const statuses = await load(trafficPort, ['/static/file.txt'], 1500);
  assert.ok(statuses[200] > 50, `traffic: ${JSON.stringify(statuses)}`);
  await settledStats(metricsPort);
  await page.type('#snapshot-name', 'files-only');
  await page.click('#save-form button[type="submit"]');
  await page.waitForFunction(
    () => document.getElementById('compare-message').textContent.startsWith("Saved 'files-only'"));

  await page.select('#compare-a', 'mixed');
  await page.select('#compare-b', 'files-only');
  await page.click('#compare-form button[type="submit"]');
  await page.waitForSelector('[data-compare-location="files"]');

  const comparison = await getJson(metricsPort, '/stats/compare?a=mixed&b=files-only');
  const runs = await page.$$eval('#comparison .run', (ps) => ps.map((p) => p.textContent));
  assert.ok(runs[0].startsWith('A: mixed') && runs[1].startsWith('B: files-only'),
    JSON.stringify(runs));
  const shown = await page.$$eval('[data-compare-location]', (sections) =>
    sections.map((section) => ({
      name: section.dataset.compareLocation,
      cells: Object.fromEntries([...section.querySelectorAll('[data-measure]')].map(
        (cell) => [`${cell.dataset.side}.${cell.dataset.measure}`, cell.textContent])),
    })));
  const rows = [...comparison.locations, comparison.total];
  assert.deepEqual(shown.map((s) => s.name), rows.map((r) => r.name));
  for (const row of rows) {
    const cells = shown.find((s) => s.name === row.name).cells;
    for (const side of ['a', 'b']) {
      assert.equal(Number(cells[`${side}.requests`].replaceAll(',', '')), row[side].requests,
        `${row.name} ${side} requests`);
    }
    const ratio = row.ratio.requests;
    assert.equal(cells['ratio.requests'], ratio === null ? '-' : `${ratio.toFixed(2)}×`);
  }
  const files = rows.find((r) => r.name === 'files');
  assert.ok(files.a.requests > 0 && files.b.requests > 0, JSON.stringify(files));
  console.log(`  the compare view shows 'mixed' and 'files-only' as /stats/compare has them`);
}

async function main() {
  const binary = path.resolve(option('--portico', 'build/portico'));
  const out = path.resolve(option('--out', 'build/tests/browser-output'));
  if (!fs.existsSync(CHROMIUM)) {
    console.log(`SKIP: no chromium at ${CHROMIUM} (deploy/install-deps.sh --test installs it)`);
    return 77;
  }
  let puppeteer;
  try {
    puppeteer = require('puppeteer-core');
  } catch {
    throw new Error('puppeteer-core is not installed: run deploy/install-deps.sh --test ' +
      '(npm ci in tests/browser)');
  }
  fs.mkdirSync(out, { recursive: true });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'portico-browser-'));
  const startTime = Date.now();
  const app = await startApp();
  const portico = startPortico(binary, dir, app.address().port);
  let browser;
  let page;
  try {
    await waitFor('portico to listen', () => portico.port('metrics') &&
      portico.port('listening') && portico.port('listening', ' for TLS'));
    const metricsPort = portico.port('metrics');
    const trafficPort = portico.port('listening');
    const tls = { port: portico.port('listening', ' for TLS'), ca: portico.certificate };
    await waitFor('the workers', async () =>
      (await request(metricsPort, 'GET', '/healthz')).status === 200);

    browser = await puppeteer.launch({
      executablePath: CHROMIUM,
      headless: true,
      userDataDir: path.join(dir, 'chromium-profile'),
      // Flags known to work here as root, with no network beyond loopback.
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
        '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    started.add(browser.process().pid);
    page = await browser.newPage();
    await page.setViewport({ width: 1280, height: 900 });
    const origin = `http://127.0.0.1:${metricsPort}`;
    const requested = [];
    const problems = [];
    page.on('request', (r) => requested.push(r.url()));
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(`console: ${message.text()}`);
    });

    await page.goto(`${origin}/`);
    await page.waitForFunction(() => Number(document.body.dataset.reads ?? 0) >= 1);
    await checkLiveView(page, metricsPort, trafficPort, tls);
    await checkCertificates(page, metricsPort);
    await page.screenshot({ path: path.join(out, 'dashboard-live.png'), fullPage: true });
    // Narrower, not isMobile, which would reload the page and lose its history.
    await page.setViewport({ width: 390, height: 844 });
    await page.screenshot({ path: path.join(out, 'dashboard-phone.png') });
    await checkPhoneLayout(page);
    await page.setViewport({ width: 1280, height: 900 });

    await checkCompareView(page, metricsPort, trafficPort);
    await page.screenshot({ path: path.join(out, 'dashboard-compare.png'), fullPage: true });

    const outside = requested.filter((url) => !url.startsWith(`${origin}/`));
    assert.deepEqual(outside, [], 'the page loaded resources from outside the listener');
    assert.deepEqual(problems, [], 'the page reported errors');
    console.log(`  ${requested.length} requests, all to ${origin}; no page errors`);
    console.log(`dashboard: passed in ${((Date.now() - startTime) / 1000).toFixed(1)} s; ` +
      `screenshots in ${out}`);
    return 0;
  } catch (error) {
    if (page) {
      await page.screenshot({ path: path.join(out, 'dashboard-failure.png'), fullPage: true })
        .catch(() => {});
    }
    console.error(`portico log:\n${portico.log()}`);
    throw error;
  } finally {
    if (browser) {
      await browser.close();
      started.delete(browser.process()?.pid);
    }
    await stop(portico.child);
    app.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const watchdog = setTimeout(() => {
  console.error(`dashboard: no result within ${DEADLINE_MS / 1000} s`);
  for (const pid of started) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  process.exit(1);
}, DEADLINE_MS);

main().then(
  (code) => {
    clearTimeout(watchdog);
    process.exitCode = code;
  },
  (error) => {
    clearTimeout(watchdog);
    console.error(`dashboard: FAILED: ${error.stack || error}`);
    process.exitCode = 1;
  });
