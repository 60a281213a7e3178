import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseAddress, parseRange } from './egress-addresses.js';
import { parseEgressList } from './egress-entries.js';
import { decideEgress, type EgressVerdict, type OwnEndpoints } from './egress-rules.js';

const NOTHING_OWN: OwnEndpoints = { ports: [], localRanges: [], backends: [] };

function decide(
  target: { address: string; port: number; name?: string },
  options: { allow?: string; deny?: string; own?: OwnEndpoints } = {},
): EgressVerdict {
  const rules = {
    allow: parseEgressList(options.allow ?? '').entries,
    deny: parseEgressList(options.deny ?? '').entries,
  };
  return decideEgress(rules, options.own ?? NOTHING_OWN, {
    ...target,
    address: parseAddress(target.address),
  });
}

const reason = (verdict: EgressVerdict) => (verdict.allowed ? 'allowed' : verdict.reason);

describe('the egress policy, address by address', () => {
  it('denies by default loopback, unspecified, link-local and cloud metadata, multicast and broadcast', () => {
    for (const [address, why] of [
      ['127.0.0.1', 'loopback'],
      ['127.255.0.9', 'loopback'],
      ['::1', 'loopback'],
      ['0.0.0.0', 'unspecified'],
      ['::', 'unspecified'],
      ['169.254.169.254', 'metadata'],
      ['169.254.170.2', 'link-local'],
      ['fe80::1', 'link-local'],
      ['100.100.100.200', 'Alibaba'],
      ['168.63.129.16', 'Azure'],
      ['192.0.0.192', 'Oracle'],
      ['fd00:ec2::254', 'AWS'],
      ['fd20:ce::254', 'Google'],
      ['224.0.0.1', 'multicast'],
      ['ff02::1', 'multicast'],
      ['255.255.255.255', 'broadcast'],
    ] as const) {
      const verdict = decide({ address, port: 80 });
      assert.equal(verdict.allowed, false, `${address} is denied`);
      assert.match(reason(verdict), new RegExp(why), address);
    }
  });

  it('allows the private ranges where plants keep their PLCs, and public addresses', () => {
    for (const address of [
      '10.0.0.20',
      '172.16.5.5',
      '192.168.1.10',
      'fd12:3456::1',
      '100.64.1.1',
      '8.8.8.8',
    ])
      assert.equal(decide({ address, port: 502 }).allowed, true, address);
  });

  it('judges an IPv4-mapped IPv6 address as the IPv4 address, and the IPv4 inside NAT64 and 6to4', () => {
    assert.match(reason(decide({ address: '::ffff:127.0.0.1', port: 80 })), /loopback/);
    assert.match(reason(decide({ address: '::ffff:169.254.169.254', port: 80 })), /metadata/);
    assert.equal(decide({ address: '::ffff:10.0.0.5', port: 80 }).allowed, true);
    assert.match(reason(decide({ address: '64:ff9b::a9fe:a9fe', port: 80 })), /metadata/);
    assert.match(reason(decide({ address: '2002:7f00:1::1', port: 80 })), /loopback/);
    assert.match(reason(decide({ address: '::7f00:1', port: 80 })), /IPv4-compatible/);
  });

  it('MERIDIAN_EGRESS_ALLOW lifts a default denial for the addresses, names and ports it covers', () => {
    assert.equal(decide({ address: '127.0.0.1', port: 4840 }, { allow: '127.0.0.1' }).allowed, true);
    assert.equal(decide({ address: '127.0.0.2', port: 4840 }, { allow: '127.0.0.1' }).allowed, false);
    assert.equal(decide({ address: '127.0.0.1', port: 5020 }, { allow: '127.0.0.1:5020' }).allowed, true);
    assert.equal(decide({ address: '127.0.0.1', port: 5021 }, { allow: '127.0.0.1:5020' }).allowed, false);
    assert.equal(decide({ address: '::1', port: 4840 }, { allow: '[::1]:4840' }).allowed, true);
    assert.equal(
      decide({ address: '127.0.0.1', port: 1, name: 'sim.lab' }, { allow: 'sim.lab' }).allowed,
      true,
    );
    assert.equal(decide({ address: '127.0.0.1', port: 1 }, { allow: 'sim.lab' }).allowed, false);
  });

  it('MERIDIAN_EGRESS_DENY beats ALLOW and narrows a private range', () => {
    assert.match(
      reason(decide({ address: '10.20.0.5', port: 502 }, { deny: '10.20.0.0/16' })),
      /MERIDIAN_EGRESS_DENY lists 10\.20\.0\.0\/16/,
    );
    assert.equal(decide({ address: '10.21.0.5', port: 502 }, { deny: '10.20.0.0/16' }).allowed, true);
    assert.equal(
      decide({ address: '10.20.0.5', port: 502 }, { allow: '10.20.0.5:502', deny: '10.20.0.0/16' }).allowed,
      false,
    );
    assert.equal(decide({ address: '192.168.1.10', port: 22 }, { deny: '192.168.1.10:22' }).allowed, false);
    assert.equal(decide({ address: '192.168.1.10', port: 502 }, { deny: '192.168.1.10:22' }).allowed, true);
    const denied = decide({ address: '10.0.0.9', port: 502, name: 'plc.office' }, { deny: '*.office' });
    assert.equal(denied.allowed === false && denied.hint, null, 'no hint to allow what DENY lists');
  });

  it("denies Meridian's own ports on this host's addresses unless an entry names the port", () => {
    const own: OwnEndpoints = {
      ports: [8080, 1883],
      localRanges: [parseRange('127.0.0.0/8'), parseRange('10.1.1.4/32')],
      backends: [],
    };
    assert.match(reason(decide({ address: '127.0.0.1', port: 8080 }, { own })), /Meridian's own port 8080/);
    assert.match(reason(decide({ address: '10.1.1.4', port: 1883 }, { own })), /own port 1883/);
    assert.equal(decide({ address: '10.1.1.5', port: 8080 }, { own }).allowed, true, 'another host');
    assert.equal(decide({ address: '10.1.1.4', port: 502 }, { own }).allowed, true, 'another port');
    assert.equal(
      decide({ address: '127.0.0.1', port: 8080 }, { own, allow: '127.0.0.0/8,0.0.0.0/0' }).allowed,
      false,
      'an address or range entry does not open Meridian itself',
    );
    assert.equal(
      decide({ address: '127.0.0.1', port: 8080 }, { own, allow: '127.0.0.1:8080' }).allowed,
      true,
    );
  });

  it("denies DATABASE_URL's and MQTT_URL's hosts; their servers' ports only an entry with the port allows", () => {
    const own: OwnEndpoints = {
      ports: [],
      localRanges: [],
      backends: [
        { setting: 'DATABASE_URL', addresses: [parseAddress('10.0.0.7')], port: 5432 },
        { setting: 'MQTT_URL', addresses: [parseAddress('fd00::7')], port: 1883 },
      ],
    };
    assert.match(reason(decide({ address: '10.0.0.7', port: 5432 }, { own })), /the DATABASE_URL server/);
    assert.match(reason(decide({ address: '10.0.0.7', port: 22 }, { own })), /the host of DATABASE_URL/);
    assert.match(reason(decide({ address: 'fd00::7', port: 1883 }, { own })), /the MQTT_URL server/);
    assert.equal(decide({ address: '10.0.0.7', port: 22 }, { own, allow: '10.0.0.7' }).allowed, true);
    assert.equal(decide({ address: '10.0.0.7', port: 5432 }, { own, allow: '10.0.0.7' }).allowed, false);
    assert.equal(decide({ address: '10.0.0.7', port: 5432 }, { own, allow: '10.0.0.7:5432' }).allowed, true);
  });
});
