import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { protocolOf } from '../../src/modules/connections/protocols/protocol-registry.js';
import { EgressPolicy } from '../../src/platform/egress/egress-policy.js';
import { freePort } from '../helpers/free-port.js';
import { waitUntil } from '../helpers/wait.js';
import { ModbusTestServer } from './modbus-test-server.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A connect that gave up on its time limit must not leave its socket to the device: a device may allow
 * one or two sessions, and a socket that completed its connect after the limit stayed open, unread, beside
 * the session of the next attempt (seen once on a loaded machine: two sessions after a restart).
 */
describe('Modbus TCP: a connect past its time limit leaves no session on the device', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'meridian-modbus-timeout-'));
  const egress = new EgressPolicy({ allow: ['127.0.0.1'], deny: [], ownPorts: () => [], backends: [] });
  let device: ModbusTestServer;

  before(async () => {
    device = new ModbusTestServer(await freePort());
    await device.start();
  });
  after(async () => {
    await device?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('closes the socket whose connect completed after the attempt timed out', async () => {
    const { driver } = protocolOf('modbus-tcp');
    // The event loop held for 20 ms right after the socket starts connecting (a busy process): the
    // 1 ms limit is then due before the connect is seen, and the attempt fails on it.
    const connect = Socket.prototype.connect;
    Socket.prototype.connect = function (this: Socket, ...args: unknown[]) {
      const socket = (connect as (...a: unknown[]) => Socket).apply(this, args);
      const end = performance.now() + 20;
      while (performance.now() < end) {}
      return socket;
    } as typeof connect;
    let failure: unknown;
    try {
      await driver.connect(
        { host: '127.0.0.1', port: device.port, timeoutMs: 1 },
        { onLost: () => {} },
        { dataDir, readOnly: false, egress },
      );
    } catch (error) {
      failure = error;
    } finally {
      Socket.prototype.connect = connect;
    }
    assert.match(String(failure), /timed out|connecting to/i, 'the attempt failed on its time limit');
    // The device saw the connection (its connect completed) and sees it closed.
    await waitUntil('the device saw the connection', () => (device.opened > 0 ? true : null), 5000);
    await sleep(200);
    assert.equal(device.sessions(), 0, 'no session left open on the device');
  });

  it('a connect within its limit holds exactly one session, closed with the session', async () => {
    const { driver } = protocolOf('modbus-tcp');
    const session = await driver.connect(
      { host: '127.0.0.1', port: device.port, timeoutMs: 3000 },
      { onLost: () => {} },
      { dataDir, readOnly: false, egress },
    );
    await waitUntil('one session', () => (device.sessions() === 1 ? true : null), 5000);
    await session.close();
    await waitUntil('no session', () => (device.sessions() === 0 ? true : null), 5000);
  });
});
