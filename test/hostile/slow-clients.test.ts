import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

/** Sends raw bytes on a new connection and resolves with everything the server answers until it closes. */
function rawExchange(port: number, bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let answer = '';
    socket.on('data', (chunk) => {
      answer += chunk.toString('latin1');
    });
    socket.on('error', reject);
    socket.on('close', () => resolve(answer));
    socket.end(bytes);
  });
}

describe('slow and malformed clients', () => {
  let server: TestServer;
  let port: number;
  before(async () => {
    server = await startTestServer('sqlite');
    port = Number(new URL(server.url).port);
  });
  after(() => server?.close());

  it('refuses a header carrying CR LF injection with 400, and keeps serving', async () => {
    const answer = await rawExchange(
      port,
      `GET /api/v1/organizations HTTP/1.1\r\nHost: x\r\nX-Organization-ID: a\rX-Injected: 1\r\n\r\n`,
    );
    assert.match(answer, /^HTTP\/1\.1 400/);
    assert.equal((await server.client.get('/healthz')).status, 200);
  });

  it('refuses a malformed request line and an invalid header name with 400', async () => {
    assert.match(await rawExchange(port, 'GET /\x00 HTTP/1.1\r\nHost: x\r\n\r\n'), /^HTTP\/1\.1 400/);
    assert.match(await rawExchange(port, 'GET / HTTP/1.1\r\nHo st: x\r\n\r\n'), /^HTTP\/1\.1 400/);
  });

  it('keeps answering others while 200 clients trickle their headers, and drops those clients', async () => {
    const sockets: Socket[] = [];
    const closed: Promise<void>[] = [];
    for (let i = 0; i < 200; i++) {
      const socket = connect(port, '127.0.0.1');
      socket.on('error', () => {});
      closed.push(new Promise((resolve) => socket.on('close', () => resolve())));
      socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n');
      sockets.push(socket);
    }
    const trickle = setInterval(() => {
      for (const socket of sockets) if (!socket.destroyed) socket.write('X-Slow: 1\r\n');
    }, 1000);
    try {
      for (let i = 0; i < 20; i++) assert.equal((await server.client.get('/healthz')).status, 200);
      // The headers timeout (10 s) ends every trickling connection; the server closes them itself.
      await Promise.all(closed);
      assert.ok(sockets.every((s) => s.destroyed));
    } finally {
      clearInterval(trickle);
      for (const socket of sockets) socket.destroy();
    }
  });
});
