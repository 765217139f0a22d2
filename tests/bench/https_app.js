// The HTTPS upstream of side_by_side.py's proxy-tls scenario: the demo app's
// GET /hello ("Hello World", text/plain) over node:https, with the
// certificate the harness made, counting its TLS handshakes so that the
// handshakes per request of the proxy in front can be quoted.
//
//   PORT=13301 CERT=app.pem KEY=app.key node https_app.js
//
// GET /_handshakes answers {"full": F, "resumed": R, "requests": N}: a full
// handshake is a new session, a resumed one reused a session (ticket) the
// client kept; `requests` counts every other request. One instance per
// proxy, so each proxy's figures are its own.
'use strict';

const fs = require('node:fs');
const https = require('node:https');

const counts = { full: 0, resumed: 0, requests: 0 };

function send(res, status, type, body) {
  res.writeHead(status, { 'Content-Type': type, 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

const server = https.createServer({
  cert: fs.readFileSync(process.env.CERT),
  key: fs.readFileSync(process.env.KEY),
}, (req, res) => {
  if (req.url === '/_handshakes') {
    send(res, 200, 'application/json', JSON.stringify(counts));
    return;
  }
  counts.requests += 1;
  if (req.url.split('?')[0] === '/hello') send(res, 200, 'text/plain', 'Hello World');
  else send(res, 404, 'text/plain', 'Not Found\n');
});

// After the handshake: TLS 1.3 resumption (a ticket) shows as a reused session.
server.on('secureConnection', (socket) => {
  if (socket.isSessionReused()) counts.resumed += 1;
  else counts.full += 1;
});

server.listen(Number(process.env.PORT), '127.0.0.1');

for (const signal of ['SIGTERM', 'SIGINT']) {
  process.on(signal, () => process.exit(0));
}
