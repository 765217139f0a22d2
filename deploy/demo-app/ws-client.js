// A minimal WebSocket client (node:net only) that checks the /ws echo,
// directly or through portico: handshake and accept key, a text frame, a
// 100 KiB binary frame, a fragmented message, ping/pong, then close.
// Usage: node ws-client.js [host:port]   (default 127.0.0.1:3000)
'use strict';

const net = require('node:net');
const crypto = require('node:crypto');

const [host, port] = (process.argv[2] || '127.0.0.1:3000').split(':');

function clientFrame(opcode, payload, fin = true) {
  const mask = crypto.randomBytes(4);
  const length = payload.length;
  let head;
  if (length < 126) {
    head = Buffer.from([(fin ? 0x80 : 0) | opcode, 0x80 | length]);
  } else if (length < 65536) {
    head = Buffer.alloc(4);
    head[0] = (fin ? 0x80 : 0) | opcode;
    head[1] = 0x80 | 126;
    head.writeUInt16BE(length, 2);
  } else {
    head = Buffer.alloc(10);
    head[0] = (fin ? 0x80 : 0) | opcode;
    head[1] = 0x80 | 127;
    head.writeBigUInt64BE(BigInt(length), 2);
  }
  const masked = Buffer.from(payload);
  for (let i = 0; i < masked.length; i++) masked[i] ^= mask[i & 3];
  return Buffer.concat([head, mask, masked]);
}

// Server frames are unmasked.
function parseServerFrame(buffer) {
  if (buffer.length < 2) return null;
  let length = buffer[1] & 0x7f;
  let offset = 2;
  if (length === 126) {
    if (buffer.length < 4) return null;
    length = buffer.readUInt16BE(2);
    offset = 4;
  } else if (length === 127) {
    if (buffer.length < 10) return null;
    length = Number(buffer.readBigUInt64BE(2));
    offset = 10;
  }
  if (buffer.length < offset + length) return null;
  return {
    fin: (buffer[0] & 0x80) !== 0,
    opcode: buffer[0] & 0x0f,
    payload: buffer.subarray(offset, offset + length),
    size: offset + length,
  };
}

const key = crypto.randomBytes(16).toString('base64');
const expectedAccept = crypto.createHash('sha1')
  .update(key + '258EAFA5-E914-47DA-95CA-C5AB0DC85B11').digest('base64');
const big = crypto.randomBytes(100 * 1024);

const expected = [
  { opcode: 0x1, fin: true, payload: Buffer.from('hello through the tunnel') },
  { opcode: 0x2, fin: true, payload: big },
  { opcode: 0x1, fin: false, payload: Buffer.from('frag') },
  { opcode: 0x0, fin: true, payload: Buffer.from('mented') },
  { opcode: 0xa, fin: true, payload: Buffer.from('are you there') },
  { opcode: 0x8, fin: true, payload: Buffer.from([0x03, 0xe8]) },
];

const socket = net.connect(Number(port), host);
const timer = setTimeout(() => { console.error('FAIL: timed out'); process.exit(1); }, 5000);
let buffer = Buffer.alloc(0);
let upgraded = false;
let received = 0;

function fail(message) {
  console.error('FAIL: ' + message);
  process.exit(1);
}

socket.on('connect', () => {
  socket.write(`GET /ws HTTP/1.1\r\nHost: ${host}:${port}\r\nUpgrade: websocket\r\n` +
               `Connection: Upgrade\r\nSec-WebSocket-Key: ${key}\r\n` +
               'Sec-WebSocket-Version: 13\r\n\r\n');
});

socket.on('data', (chunk) => {
  buffer = Buffer.concat([buffer, chunk]);
  if (!upgraded) {
    const end = buffer.indexOf('\r\n\r\n');
    if (end < 0) return;
    const head = buffer.subarray(0, end).toString();
    buffer = buffer.subarray(end + 4);
    if (!head.startsWith('HTTP/1.1 101')) fail('no 101:\n' + head);
    if (!head.includes(`Sec-WebSocket-Accept: ${expectedAccept}`)) fail('bad accept:\n' + head);
    upgraded = true;
    console.log('101 Switching Protocols, accept key ok');
    socket.write(clientFrame(0x1, expected[0].payload));
    socket.write(clientFrame(0x2, big));
    socket.write(clientFrame(0x1, expected[2].payload, false));
    socket.write(clientFrame(0x0, expected[3].payload, true));
    socket.write(clientFrame(0x9, expected[4].payload));
    socket.write(clientFrame(0x8, Buffer.from([0x03, 0xe8])));
  }
  for (let parsed; (parsed = parseServerFrame(buffer)) !== null;) {
    buffer = buffer.subarray(parsed.size);
    const want = expected[received++];
    if (!want || parsed.opcode !== want.opcode || parsed.fin !== want.fin ||
        !parsed.payload.equals(want.payload)) {
      fail(`frame ${received}: opcode ${parsed.opcode} fin ${parsed.fin} ` +
           `${parsed.payload.length} bytes`);
    }
    console.log(`frame ${received}: opcode ${parsed.opcode}, ${parsed.payload.length} bytes ok`);
  }
});

socket.on('end', () => {
  clearTimeout(timer);
  if (received !== expected.length) fail(`got ${received} of ${expected.length} frames`);
  console.log('closed by the server after the close frame: OK');
});
socket.on('error', (error) => fail(error.message));
