// The JSON the compression benchmarks send: a list of small records, each
// different (ids and names vary), so no compressor can take a shortcut on
// repeated bytes. The same every start. Used by server.js (/data.json,
// /small.json) and by tests/bench/express/server.js, which must serve the
// very same bytes.
'use strict';

// `size` bytes of it (the cut may fall inside a record: the compressors do
// not care, and the bytes stay those of the earlier hand-run figures).
function jsonOfSize(size) {
  const items = [];
  let length = 2;
  for (let i = 0; length < size; i++) {
    const item = { id: i, name: 'user ' + ((i * 7919) % 100003), active: i % 3 !== 0 };
    items.push(item);
    length += JSON.stringify(item).length + 1;
  }
  return Buffer.from(JSON.stringify(items).slice(0, size));
}

const DATA_JSON = jsonOfSize(100 * 1024);
const SMALL_JSON = DATA_JSON.subarray(0, 2048);

module.exports = { DATA_JSON, SMALL_JSON };
