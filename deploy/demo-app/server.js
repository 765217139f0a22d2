// The app behind portico in the benchmarks: a plain node:http server standing
// in for the Node/Meteor app of the "nginx in front of Node" articles. It
// keeps Node's default keepAliveTimeout (5 s): a proxy that pools connections
// to it must close idle ones first, or retry, which is the race portico is
// tested against.
'use strict';

const http = require('node:http');
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const { DATA_JSON, SMALL_JSON } = require('./data.js');

// Loopback by default; a container sets HOST=0.0.0.0, since portico reaches
// it from another container (Compose) or pod (Kubernetes).
const HOST = process.env.HOST || '127.0.0.1';
const PORT = Number(process.env.PORT || 3000);

const INDEX_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>portico demo app</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
  body { font-family: system-ui, sans-serif; max-width: 40rem; margin: 2rem auto; line-height: 1.5; }
  code { background: #f3f3f3; padding: 0 .25rem; }
  li { margin: .25rem 0; }
</style>
</head>
<body>
<h1>portico demo app</h1>
<p>This page comes from Node.js (<code>node:http</code>), through portico, with either config.
It is the app of the "nginx in front of Node" benchmarks: compare a request
answered by the app with a file answered by portico from disk.</p>
<ul>
  <li><a href="/hello"><code>/hello</code></a>: "Hello World", text/plain</li>
  <li><a href="/api/time"><code>/api/time</code></a>: JSON with the server time in milliseconds</li>
  <li><a href="/image.jpg"><code>/image.jpg</code></a>: a 100 KiB image. With the default
    <code>conf/portico.toml</code> portico answers it from <code>www/</code> on disk and this
    app never sees it; with <code>conf/proxy-only.toml</code> it comes from this app, from memory.
    (<code>/index.html</code> and <code>/style.css</code> likewise.)</li>
  <li><code>/ws</code>: a WebSocket echo (text and binary frames, ping/pong, close)</li>
  <li><code>POST /echo</code>: the request body back; <a href="/events"><code>/events</code></a>: five server-sent events, 100 ms apart</li>
</ul>
<p>Served with Node's default keep-alive timeout of 5 s, so the proxy in
front must close its idle pooled connections before Node does.</p>
</body>
</html>
`;

// The picture www/image.jpg also holds (100 KiB, the size the benchmarks
// use), so /image.jpg is the same bytes from disk and from the app.
const IMAGE = fs.readFileSync(path.join(__dirname, 'image.jpg'));

// CACHE_CONTROL="public, max-age=3600" (say) adds that Cache-Control to
// every 200 answer of send(): what lets a cache in front store the pages
// (the response cache benchmark, tests/bench/side_by_side.py --scenario cache).
const CACHE_CONTROL = process.env.CACHE_CONTROL || '';

function send(res, status, type, body) {
  const head = { 'Content-Type': type, 'Content-Length': Buffer.byteLength(body) };
  if (CACHE_CONTROL && status === 200) head['Cache-Control'] = CACHE_CONTROL;
  res.writeHead(status, head);
  res.end(body);
}

// POST /echo: the body back, as it came (the soak test checks checksums).
function echo(req, res) {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => send(res, 200, 'application/octet-stream', Buffer.concat(chunks)));
}

// GET /events: five server-sent events 100 ms apart, then the end.
function events(res) {
  res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
  let sent = 0;
  const timer = setInterval(() => {
    res.write(`id: ${sent}\ndata: event ${sent}\n\n`);
    if (++sent === 5) {
      clearInterval(timer);
      res.end();
    }
  }, 100);
  res.on('close', () => clearInterval(timer));
}

const server = http.createServer((req, res) => {
  const path = req.url.split('?')[0];
  if (req.method === 'POST' && path === '/echo') {
    echo(req, res);
    return;
  }
  if (req.method === 'GET' && path === '/events') {
    events(res);
    return;
  }
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.setHeader('Allow', 'GET, HEAD');
    send(res, 405, 'text/plain', 'Method Not Allowed\n');
    return;
  }
  switch (path) {
    case '/':
      send(res, 200, 'text/html; charset=utf-8', INDEX_HTML);
      break;
    case '/hello':
      send(res, 200, 'text/plain', 'Hello World');
      break;
    case '/api/time':
      send(res, 200, 'application/json', JSON.stringify({ time: Date.now() }));
      break;
    case '/image.jpg':
      send(res, 200, 'image/jpeg', IMAGE);
      break;
    case '/data.json':
      send(res, 200, 'application/json', DATA_JSON);
      break;
    case '/small.json':
      send(res, 200, 'application/json', SMALL_JSON);
      break;
    default:
      send(res, 404, 'text/plain', 'Not Found\n');
  }
});

// --- WebSocket echo at /ws (RFC 6455, by hand) -----------------------------

const WS_GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';
const MAX_MESSAGE = 16 * 1024 * 1024;
const OP_CONTINUATION = 0x0, OP_TEXT = 0x1, OP_BINARY = 0x2;
const OP_CLOSE = 0x8, OP_PING = 0x9, OP_PONG = 0xa;

function frame(opcode, payload, fin = true) {
  const length = payload.length;
  let head;
  if (length < 126) {
    head = Buffer.from([(fin ? 0x80 : 0) | opcode, length]);
  } else if (length < 65536) {
    head = Buffer.alloc(4);
    head[0] = (fin ? 0x80 : 0) | opcode;
    head[1] = 126;
    head.writeUInt16BE(length, 2);
  } else {
    head = Buffer.alloc(10);
    head[0] = (fin ? 0x80 : 0) | opcode;
    head[1] = 127;
    head.writeBigUInt64BE(BigInt(length), 2);
  }
  return Buffer.concat([head, payload]);
}

function closeFrame(code) {
  const payload = Buffer.alloc(2);
  payload.writeUInt16BE(code, 0);
  return frame(OP_CLOSE, payload);
}

// One parsed frame from the front of `buffer`, or null until it is complete.
function parseFrame(buffer) {
  if (buffer.length < 2) return null;
  const fin = (buffer[0] & 0x80) !== 0;
  const opcode = buffer[0] & 0x0f;
  const masked = (buffer[1] & 0x80) !== 0;
  let length = buffer[1] & 0x7f;
  let offset = 2;
  if (length === 126) {
    if (buffer.length < 4) return null;
    length = buffer.readUInt16BE(2);
    offset = 4;
  } else if (length === 127) {
    if (buffer.length < 10) return null;
    const big = buffer.readBigUInt64BE(2);
    if (big > BigInt(MAX_MESSAGE)) return { error: 1009 };
    length = Number(big);
    offset = 10;
  }
  if (length > MAX_MESSAGE) return { error: 1009 };
  // RFC 6455 5.1: a server must close on an unmasked client frame.
  if (!masked) return { error: 1002 };
  if (buffer.length < offset + 4 + length) return null;
  const mask = buffer.subarray(offset, offset + 4);
  const payload = Buffer.from(buffer.subarray(offset + 4, offset + 4 + length));
  for (let i = 0; i < payload.length; i++) payload[i] ^= mask[i & 3];
  return { fin, opcode, payload, size: offset + 4 + length };
}

function acceptWebSocket(req, socket, head) {
  const key = req.headers['sec-websocket-key'];
  const upgrade = (req.headers.upgrade || '').toLowerCase();
  if (req.url.split('?')[0] !== '/ws' || upgrade !== 'websocket' || !key ||
      req.headers['sec-websocket-version'] !== '13') {
    socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
    return;
  }
  const accept = crypto.createHash('sha1').update(key + WS_GUID).digest('base64');
  socket.write('HTTP/1.1 101 Switching Protocols\r\n' +
               'Upgrade: websocket\r\n' +
               'Connection: Upgrade\r\n' +
               `Sec-WebSocket-Accept: ${accept}\r\n\r\n`);
  socket.setNoDelay(true);

  let pending = head && head.length ? Buffer.from(head) : Buffer.alloc(0);
  let closing = false;
  const fail = (code) => {
    if (closing) return;
    closing = true;
    socket.end(closeFrame(code));
  };
  socket.on('data', (chunk) => {
    pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
    for (;;) {
      if (closing) return;
      const parsed = parseFrame(pending);
      if (parsed === null) return;
      if (parsed.error) return fail(parsed.error);
      pending = pending.subarray(parsed.size);
      const { fin, opcode, payload } = parsed;
      switch (opcode) {
        case OP_TEXT:
        case OP_BINARY:
        case OP_CONTINUATION:
          // Echoed frame by frame, so a fragmented message comes back fragmented.
          socket.write(frame(opcode, payload, fin));
          break;
        case OP_PING:
          socket.write(frame(OP_PONG, payload));
          break;
        case OP_PONG:
          break;
        case OP_CLOSE:
          closing = true;
          // Echo the status code (if any) and close our side.
          socket.end(frame(OP_CLOSE, payload.subarray(0, 2)));
          return;
        default:
          return fail(1002);
      }
    }
  });
  socket.on('error', () => socket.destroy());
}

server.on('upgrade', acceptWebSocket);

server.listen(PORT, HOST, () => {
  console.log(`demo-app listening on http://${HOST}:${server.address().port} ` +
              `(pid ${process.pid}, keepAliveTimeout ${server.keepAliveTimeout} ms)`);
});

for (const signal of ['SIGTERM', 'SIGINT']) {
  process.on(signal, () => {
    server.close(() => process.exit(0));
    server.closeIdleConnections();
    setTimeout(() => process.exit(0), 2000).unref();
  });
}
