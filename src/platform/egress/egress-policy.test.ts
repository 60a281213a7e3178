import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { connectPinned, EgressDeniedError, pinnedLookup } from './egress-pinning.js';
import { EgressPolicy, type EgressPolicyDeps, type LookupAll } from './egress-policy.js';

/** A DNS of the test's own: each name answers its list (or, given a function, what it returns now). */
function dns(names: Record<string, string[] | (() => string[])>): LookupAll & { asked: string[] } {
  const asked: string[] = [];
  const lookup = async (hostname: string) => {
    asked.push(hostname);
    const answer = names[hostname];
    if (!answer) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return (typeof answer === 'function' ? answer() : answer).map((address) => ({
      address,
      family: address.includes(':') ? 6 : 4,
    }));
  };
  return Object.assign(lookup, { asked });
}

function policy(deps: Partial<EgressPolicyDeps> = {}) {
  return new EgressPolicy({ allow: [], deny: [], ownPorts: () => [], backends: [], ...deps });
}

describe('EgressPolicy.resolve: checked after DNS, pinned', () => {
  it('answers every address of an allowed name, in the order DNS gave them', async () => {
    const target = await policy({ lookup: dns({ 'plc.lab': ['10.0.0.5', 'fd00::5'] }) }).resolve(
      'PLC.lab',
      502,
    );
    assert.deepEqual(target, {
      host: 'plc.lab',
      port: 502,
      name: 'plc.lab',
      addresses: ['10.0.0.5', 'fd00::5'],
    });
  });

  it('denies a name that resolves to a denied address, naming the policy, the name and the reason', async () => {
    const egress = policy({ lookup: dns({ 'plc.test': ['127.0.0.1'] }) });
    await assert.rejects(egress.resolve('plc.test', 502), (error: Error) => {
      assert.ok(error instanceof EgressDeniedError);
      assert.equal(
        error.message,
        'egress policy: connections may not reach plc.test:502: it resolves to 127.0.0.1 (loopback); MERIDIAN_EGRESS_ALLOW can allow it',
      );
      return true;
    });
  });

  it('denies a name when one of its addresses is denied (a round-robin answer cannot smuggle one in)', async () => {
    const egress = policy({ lookup: dns({ 'mixed.test': ['10.0.0.5', '169.254.169.254'] }) });
    await assert.rejects(egress.resolve('mixed.test', 80), /169\.254\.169\.254 \(link-local/);
  });

  it('checks an IP literal without DNS, in every form getaddrinfo takes', async () => {
    const lookup = dns({});
    const egress = policy({ lookup });
    for (const literal of ['127.0.0.1', '127.1', '2130706433', '0x7f.1', '[::1]', '::ffff:127.0.0.1'])
      await assert.rejects(egress.resolve(literal, 80), EgressDeniedError, literal);
    assert.deepEqual((await egress.resolve('10.0.0.5', 80)).addresses, ['10.0.0.5']);
    assert.deepEqual(lookup.asked, []);
  });

  it('refuses what is no host at all (a Unix socket path pg would open)', async () => {
    await assert.rejects(
      policy().resolve('/var/run/postgresql', 5432),
      /is not a host name or an IP address/,
    );
  });

  it('lets DNS errors through as they are (a name that does not resolve is not a policy matter)', async () => {
    await assert.rejects(policy({ lookup: dns({}) }).resolve('nowhere.test', 80), { code: 'ENOTFOUND' });
  });

  it('looks a name up once per resolve; the pinned lookup answers that answer and never asks again', async () => {
    let answer = ['10.0.0.5'];
    const lookup = dns({ 'rebind.test': () => answer });
    const target = await policy({ lookup }).resolve('rebind.test', 80);
    answer = ['127.0.0.1'];
    const pinned = pinnedLookup(target);
    const seen = await new Promise<unknown>((resolve, reject) =>
      pinned('rebind.test', { all: true }, (error, addresses) =>
        error ? reject(error) : resolve(addresses),
      ),
    );
    assert.deepEqual(seen, [{ address: '10.0.0.5', family: 4 }]);
    assert.deepEqual(lookup.asked, ['rebind.test']);
    await assert.rejects(
      policy({ lookup }).resolve('rebind.test', 80),
      /loopback/,
      'a new resolve sees the new answer',
    );
    await assert.rejects(
      new Promise((resolve, reject) =>
        pinned('other.test', {}, (error, address) => (error ? reject(error) : resolve(address))),
      ),
      /egress policy: other.test was not checked/,
    );
  });

  it("denies Meridian's own ports on this host, and DATABASE_URL's and MQTT_URL's servers, looked up", async () => {
    const lookup = dns({ 'db.internal': ['10.0.0.7'], 'broker.internal': ['10.0.0.8'] });
    const egress = policy({
      lookup,
      allow: ['127.0.0.1'],
      ownPorts: () => [8080],
      backends: [
        { setting: 'DATABASE_URL', url: 'postgres://u:p@db.internal/meridian' },
        { setting: 'MQTT_URL', url: 'mqtts://broker.internal' },
      ],
    });
    await assert.rejects(egress.resolve('127.0.0.1', 8080), /Meridian's own port 8080/);
    await assert.rejects(egress.resolve('10.0.0.7', 5432), /the DATABASE_URL server/);
    await assert.rejects(egress.resolve('10.0.0.7', 22), /the host of DATABASE_URL/);
    await assert.rejects(egress.resolve('10.0.0.8', 8883), /the MQTT_URL server/);
    assert.deepEqual((await egress.resolve('127.0.0.1', 4840)).addresses, ['127.0.0.1']);
    assert.equal(
      lookup.asked.filter((n) => n === 'db.internal').length,
      1,
      'backends are looked up once a while',
    );
  });
});

describe('EgressPolicy.literalDenial: what a save refuses without DNS', () => {
  const egress = policy({ lookup: dns({ 'plc.test': ['127.0.0.1'] }) });

  it('refuses IP literals and localhost the policy denies, with the reason', async () => {
    assert.equal(
      await egress.literalDenial('169.254.169.254', 80),
      'egress policy: connections may not reach 169.254.169.254:80 (link-local, where clouds serve instance metadata); MERIDIAN_EGRESS_ALLOW can allow it',
    );
    assert.match(
      (await egress.literalDenial('LOCALHOST.', 5432)) ?? '',
      /localhost:5432: it resolves to 127\.0\.0\.1/,
    );
    assert.match((await egress.literalDenial('db.localhost', 5432)) ?? '', /loopback/);
    assert.match((await egress.literalDenial('[::1]', 4840)) ?? '', /\[::1\]:4840 \(loopback/);
    assert.match((await egress.literalDenial('::ffff:127.0.0.1', 4840)) ?? '', /loopback/);
  });

  it('leaves names to the lookup at connect time, and passes allowed literals', async () => {
    assert.equal(await egress.literalDenial('plc.test', 502), undefined);
    assert.equal(await egress.literalDenial('10.0.0.5', 502), undefined);
    // localhost may be 127.0.0.1 or ::1: with one of them allowed, the lookup at connect time decides.
    assert.equal(await policy({ allow: ['127.0.0.1'] }).literalDenial('localhost', 502), undefined);
    assert.equal(await policy({ allow: ['::1'] }).literalDenial('localhost', 502), undefined);
  });
});

describe('connectPinned', () => {
  let pinnedServer: Server;
  let otherServer: Server;
  let port = 0;
  const reached: string[] = [];

  before(async () => {
    pinnedServer = createServer((socket) => {
      reached.push('127.0.0.2');
      socket.end();
    });
    await new Promise<void>((resolve) => pinnedServer.listen(0, '127.0.0.2', resolve));
    port = (pinnedServer.address() as { port: number }).port;
    otherServer = createServer((socket) => {
      reached.push('127.0.0.1');
      socket.end();
    });
    await new Promise<void>((resolve) => otherServer.listen(port, '127.0.0.1', resolve));
  });
  after(() => {
    pinnedServer.close();
    otherServer.close();
  });

  it('connects to the address the check saw, not to what the name resolves to afterwards', async () => {
    let answer = ['127.0.0.2'];
    const egress = policy({ allow: ['127.0.0.2'], lookup: dns({ 'sim.test': () => answer }) });
    const target = await egress.resolve('sim.test', port);
    answer = ['127.0.0.1'];
    const socket = connectPinned(target);
    await new Promise<void>((resolve, reject) => {
      socket.once('close', () => resolve());
      socket.once('error', reject);
      socket.resume();
    });
    assert.deepEqual(reached, ['127.0.0.2']);
  });
});
