// Express with compression() for tests/bench/run.sh's compress scenarios:
// the Node way of doing what portico and nginx do there, in one process
// (the app compresses its own responses, nothing in front). The same data
// as the others: the 20 KB stylesheet from disk (express.static, ASSETS)
// and the demo app's 100 KiB JSON (deploy/demo-app/data.js), both through
// compression() at LEVEL for gzip and for br (its brotli quality), the
// same min_length as portico's (256), br preferred over gzip as everywhere.
//
//   PORT=18080 LEVEL=6 ASSETS=DIR node tests/bench/express/server.js
//   (npm ci in tests/bench/express first; run.sh does it)
'use strict';

const path = require('node:path');
const zlib = require('node:zlib');
const express = require('express');
const compression = require('compression');
const { DATA_JSON } = require(path.join(__dirname, '../../../deploy/demo-app/data.js'));

const PORT = Number(process.env.PORT || 18080);
const LEVEL = Number(process.env.LEVEL || 6);
const ASSETS = process.env.ASSETS;
if (!ASSETS) throw new Error('ASSETS (the directory of /css/app.css) is not set');

const app = express();
app.disable('x-powered-by');
app.use(compression({
  level: LEVEL,
  threshold: 256,
  brotli: { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: LEVEL } },
}));
app.use(express.static(ASSETS));
app.get('/data.json', (req, res) => {
  res.type('application/json').send(DATA_JSON);
});

const server = app.listen(PORT, '127.0.0.1');
server.keepAliveTimeout = 75000;  // as the other servers' keepalive_timeout
function stop() {
  server.close();
  server.closeIdleConnections();
}
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
