import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import type { AddressInfo, Server, Socket } from 'node:net';
import { createServer } from 'node:net';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';

/**
 * An upstream that answers every way an HTTP answer can go wrong, on raw sockets (node:http would
 * refuse to send most of them). The scenario is the request's `?s=` query; the proxy forwards the
 * query unchanged. Loopback only.
 */

/** Random text: it does not compress, so its compressed form is as long as it is (many socket reads). */
export function incompressible(size: number): Buffer {
  return Buffer.from(
    randomBytes(Math.ceil((size * 3) / 4) + 3)
      .toString('base64')
      .slice(0, size),
  );
}

const SMALL = incompressible(1024);
const LARGE = incompressible(96 * 1024); // decodes to ≥ 64 KiB, the size the crash needed
const BOMB_DECODED = 256 * 1024 * 1024;
const BOMB = gzipSync(Buffer.alloc(BOMB_DECODED), { level: 9 }); // ~250 KB that inflates to 256 MiB
const HUGE_ERROR_BYTES = 160 * 1024 * 1024;

export interface Scenario {
  /** What a client of the proxy must see. */
  expect:
    | { status: number; body?: Buffer; bodyBytes?: number }
    | { status: number; cut: true } // the body is cut off (never a clean end), or, when nothing was sent yet, a 502
    | { failedStatus: 502 }; // the proxy answers a 502 in its own error shape
  /** What a client sees instead through a fetch (a `Response` carries only statuses 200–599). */
  fetchExpect?: Scenario['expect'];
  /** What the handler's own `Response` shows, with no server to hold its headers back (a body that fails after them is cut). */
  handlerExpect?: Scenario['expect'];
  answer(socket: Socket): void;
}

function head(status: string, headers: Record<string, string | number>): string {
  let text = `HTTP/1.1 ${status}\r\n`;
  for (const [name, value] of Object.entries(headers)) text += `${name}: ${value}\r\n`;
  return `${text}\r\n`;
}

/** The head, then the body and the close (as node:http sends an answer with `Connection: close`: the way the undici crash was found). */
function closeWith(status: string, headers: Record<string, string | number>, body: Buffer): (socket: Socket) => void {
  return (socket) => {
    socket.write(head(status, headers));
    socket.end(body);
  };
}

function chunked(body: Buffer): Buffer {
  const parts: Buffer[] = [];
  for (let offset = 0; offset < body.length; offset += 8192) {
    const part = body.subarray(offset, offset + 8192);
    parts.push(Buffer.from(`${part.length.toString(16)}\r\n`), part, Buffer.from('\r\n'));
  }
  parts.push(Buffer.from('0\r\n\r\n'));
  return Buffer.concat(parts);
}

function compressedCases(): Record<string, Scenario> {
  const cases: Record<string, Scenario> = {};
  const codings = { gzip: gzipSync, deflate: deflateSync, br: brotliCompressSync } as const;
  for (const [coding, compress] of Object.entries(codings)) {
    for (const [size, plain] of [
      ['small', SMALL],
      ['large', LARGE],
    ] as const) {
      const packed = compress(plain);
      const base = { 'content-type': 'application/json', 'content-encoding': coding, connection: 'close' };
      cases[`${coding}-${size}-length`] = {
        expect: { status: 200, body: plain },
        answer: closeWith('200 OK', { ...base, 'content-length': packed.length }, packed),
      };
      cases[`${coding}-${size}-until-close`] = {
        expect: { status: 200, body: plain },
        answer: closeWith('200 OK', base, packed),
      };
      cases[`${coding}-${size}-chunked`] = {
        expect: { status: 200, body: plain },
        answer: closeWith('200 OK', { ...base, 'transfer-encoding': 'chunked' }, chunked(packed)),
      };
    }
  }
  return cases;
}

/** An answer of ordinary text (a JSON completion, compressible) that decodes to `size` bytes, gzipped, with `Connection: close`. */
function gzippedText(size: number): Scenario {
  const unit = '{"index":0,"delta":{"content":"The quick brown fox jumps over the lazy dog."}},';
  const text = Buffer.from(unit.repeat(Math.ceil(size / unit.length)).slice(0, size));
  const packed = gzipSync(text);
  return {
    expect: { status: 200, body: text },
    answer: closeWith(
      '200 OK',
      {
        'content-type': 'application/json',
        'content-encoding': 'gzip',
        'content-length': packed.length,
        connection: 'close',
      },
      packed,
    ),
  };
}

function textCases(): Record<string, Scenario> {
  return {
    'gzip-text-64k': gzippedText(64 * 1024),
    'gzip-text-1m': gzippedText(1024 * 1024),
    'gzip-text-8m': gzippedText(8 * 1024 * 1024),
  };
}

export const SCENARIOS: Record<string, Scenario> = {
  ...compressedCases(),
  ...textCases(),
  'plain-large-close': {
    expect: { status: 200, body: LARGE },
    answer: closeWith('200 OK', { 'content-length': LARGE.length, connection: 'close' }, LARGE),
  },
  'length-longer-than-body': {
    expect: { status: 200, cut: true },
    answer: closeWith('200 OK', { 'content-length': LARGE.length + 1000, connection: 'close' }, LARGE),
  },
  'gzip-length-longer-than-body': {
    expect: { status: 200, cut: true },
    answer: (socket) => {
      const packed = gzipSync(LARGE);
      closeWith(
        '200 OK',
        { 'content-encoding': 'gzip', 'content-length': packed.length + 1000, connection: 'close' },
        packed,
      )(socket);
    },
  },
  'length-shorter-than-body': {
    expect: { status: 200, body: LARGE.subarray(0, 1000) },
    answer: closeWith('200 OK', { 'content-length': 1000, connection: 'close' }, LARGE),
  },
  'chunked-without-last-chunk': {
    expect: { status: 200, cut: true },
    answer: (socket) => {
      const framed = chunked(LARGE);
      closeWith(
        '200 OK',
        { 'transfer-encoding': 'chunked', connection: 'close' },
        framed.subarray(0, framed.length - 5),
      )(socket);
    },
  },
  'reset-mid-body': {
    expect: { status: 200, cut: true },
    answer: (socket) => {
      socket.write(head('200 OK', { 'content-length': LARGE.length }));
      socket.write(LARGE.subarray(0, 20_000), () => socket.resetAndDestroy());
    },
  },
  'reset-before-headers': { expect: { failedStatus: 502 }, answer: (socket) => socket.resetAndDestroy() },
  'close-before-headers': { expect: { failedStatus: 502 }, answer: (socket) => socket.end() },
  'garbage-status-line': { expect: { failedStatus: 502 }, answer: (socket) => socket.end('HELLO THERE\r\n\r\n') },
  'bad-status-code': {
    expect: { failedStatus: 502 },
    answer: (socket) => socket.end('HTTP/1.1 2x0 OK\r\ncontent-length: 0\r\n\r\n'),
  },
  'header-without-colon': {
    expect: { failedStatus: 502 },
    answer: (socket) => socket.end('HTTP/1.1 200 OK\r\nthis is no header\r\ncontent-length: 0\r\n\r\n'),
  },
  'two-content-lengths': {
    expect: { failedStatus: 502 },
    answer: (socket) => socket.end('HTTP/1.1 200 OK\r\ncontent-length: 3\r\ncontent-length: 5\r\n\r\nabcde'),
  },
  'corrupt-gzip': {
    expect: { failedStatus: 502 },
    handlerExpect: { status: 200, cut: true },
    answer: closeWith(
      '200 OK',
      { 'content-encoding': 'gzip', 'content-length': LARGE.length, connection: 'close' },
      LARGE,
    ),
  },
  'gzip-bomb': {
    expect: { status: 200, bodyBytes: BOMB_DECODED },
    answer: closeWith(
      '200 OK',
      { 'content-encoding': 'gzip', 'content-length': BOMB.length, connection: 'close' },
      BOMB,
    ),
  },
  'gzip-bomb-400': {
    expect: { status: 400, bodyBytes: BOMB_DECODED },
    answer: closeWith(
      '400 Bad Request',
      {
        'content-type': 'application/json',
        'content-encoding': 'gzip',
        'content-length': BOMB.length,
        connection: 'close',
      },
      BOMB,
    ),
  },
  'huge-400': {
    expect: { status: 400, bodyBytes: HUGE_ERROR_BYTES },
    answer: (socket) => {
      socket.write(head('400 Bad Request', { 'content-type': 'application/json', 'content-length': HUGE_ERROR_BYTES }));
      const block = Buffer.alloc(1024 * 1024, 0x20);
      let sent = 0;
      const more = (): void => {
        while (sent < HUGE_ERROR_BYTES) {
          sent += block.length;
          if (!socket.write(block)) {
            socket.once('drain', more);
            return;
          }
        }
        socket.end();
      };
      more();
    },
  },
  'informational-flood': {
    expect: { status: 200, body: SMALL },
    answer: (socket) =>
      socket.end(
        Buffer.concat([
          Buffer.from('HTTP/1.1 103 Early Hints\r\nlink: </a>; rel=preload\r\n\r\n'.repeat(50)),
          Buffer.from(head('200 OK', { 'content-length': SMALL.length, connection: 'close' })),
          SMALL,
        ]),
      ),
  },
  'status-999': {
    expect: { status: 999, body: SMALL },
    fetchExpect: { failedStatus: 502 },
    answer: closeWith('999 Whatever', { 'content-length': SMALL.length }, SMALL),
  },
};

/** The scenarios a client may meet whatever it does (used together by the soak). */
export const SCENARIO_NAMES = Object.keys(SCENARIOS);

export interface MisbehavingUpstream {
  url: string;
  /** Requests it has seen, by scenario. */
  seen: Map<string, number>;
  close(): Promise<void>;
}

export async function listenMisbehaving(): Promise<MisbehavingUpstream> {
  const seen = new Map<string, number>();
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    let buffered = Buffer.alloc(0);
    const onData = (chunk: Buffer): void => {
      buffered = Buffer.concat([buffered, chunk]);
      const end = buffered.indexOf('\r\n\r\n');
      if (end < 0) return;
      const headText = buffered.subarray(0, end).toString('latin1');
      const length = Number(/\r\ncontent-length:\s*(\d+)/i.exec(headText)?.[1] ?? '0');
      if (buffered.length < end + 4 + length) return;
      socket.off('data', onData);
      const target = headText.split(' ')[1] ?? '/';
      const name = new URL(target, 'http://upstream').searchParams.get('s') ?? '';
      seen.set(name, (seen.get(name) ?? 0) + 1);
      const scenario = SCENARIOS[name];
      if (scenario === undefined)
        socket.end(`HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 11\r\n\r\n{"ok":true}`);
      else scenario.answer(socket);
    };
    socket.on('data', onData);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    async close() {
      for (const socket of sockets) socket.destroy();
      server.close();
      await once(server, 'close');
    },
  };
}
