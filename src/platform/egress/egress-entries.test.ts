import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseAddress } from './egress-addresses.js';
import { type EgressEntry, entryMatches, parseEgressEntry, parseEgressList } from './egress-entries.js';

function entry(text: string): EgressEntry {
  const parsed = parseEgressEntry(text);
  assert.ok(!('problem' in parsed), `${text} parses: ${JSON.stringify(parsed)}`);
  return parsed;
}

const matches = (text: string, address: string, name?: string) =>
  entryMatches(entry(text), parseAddress(address), name);

describe('MERIDIAN_EGRESS_ALLOW / _DENY entries', () => {
  it('an IPv4 or IPv6 CIDR matches the addresses inside it and no other', () => {
    assert.equal(matches('10.0.0.0/8', '10.200.3.4'), true);
    assert.equal(matches('10.0.0.0/8', '11.0.0.1'), false);
    assert.equal(matches('fd00::/8', 'fd12::5'), true);
    assert.equal(matches('fd00::/8', 'fe80::1'), false);
    assert.equal(matches('10.0.0.0/8', 'fd00::1'), false, 'an IPv6 address never lies in an IPv4 range');
  });

  it('a single address matches itself only, IPv6 in any spelling', () => {
    assert.equal(matches('127.0.0.1', '127.0.0.1'), true);
    assert.equal(matches('127.0.0.1', '127.0.0.2'), false);
    assert.equal(matches('fd00::5', 'fd00:0:0:0:0:0:0:5'), true);
    assert.deepEqual(entry('[fd00::5]').port, undefined);
  });

  it('an IPv4-mapped IPv6 entry is the IPv4 address it maps, and matches both spellings', () => {
    assert.equal(matches('::ffff:127.0.0.1', '127.0.0.1'), true);
    assert.equal(matches('127.0.0.1', '::ffff:127.0.0.1'), true);
    assert.equal(matches('::ffff:10.0.0.0/104', '10.1.2.3'), true);
  });

  it('host:port, [v6]:port and name:port carry the port', () => {
    assert.equal(entry('10.0.0.5:502').port, 502);
    assert.equal(entry('[fd00::5]:4840').port, 4840);
    assert.equal(entry('plc.lab:4840').port, 4840);
    assert.equal(
      matches('10.0.0.5:502', '10.0.0.5'),
      true,
      'the address part matches; the port is compared apart',
    );
  });

  it('a host name matches that name (any case, a final dot ignored), not its address', () => {
    assert.equal(matches('PLC.lab', '10.0.0.9', 'plc.lab'), true);
    assert.equal(matches('plc.lab.', '10.0.0.9', 'plc.lab'), true);
    assert.equal(matches('plc.lab', '10.0.0.9'), false, 'no name: an IP literal target');
    assert.equal(matches('plc.lab', '10.0.0.9', 'other.lab'), false);
  });

  it('*.name matches every name under it, not the name itself', () => {
    assert.equal(matches('*.lab.example', '10.0.0.9', 'press4.lab.example'), true);
    assert.equal(matches('*.lab.example', '10.0.0.9', 'a.b.lab.example'), true);
    assert.equal(matches('*.lab.example', '10.0.0.9', 'lab.example'), false);
    assert.equal(matches('*.lab.example', '10.0.0.9', 'evillab.example'), false);
  });

  it('bad entries are each reported, with what was written', () => {
    const { entries, problems } = parseEgressList(
      '10.0.0.0/33, 300.1.1.1, plc.lab:0, plc.lab:70000, [fd00::5, [10.0.0.1]:5, fd00::5:x, http://x, 10.0.0.0/8:502, ' +
        'a b, 127.1, *.*.lab, 10.0.0.1',
    );
    assert.deepEqual(
      entries.map((e) => e.text),
      ['10.0.0.1'],
    );
    assert.equal(problems.length, 12, problems.join('\n'));
    for (const written of [
      '10.0.0.0/33',
      '300.1.1.1',
      'plc.lab:0',
      'plc.lab:70000',
      'http://x',
      '127.1',
      'a b',
    ])
      assert.ok(
        problems.some((p) => p.includes(`"${written}"`)),
        `${written} is named: ${problems.join('; ')}`,
      );
  });

  it('empty items (a trailing comma, spaces) are skipped', () => {
    const { entries, problems } = parseEgressList(' 10.0.0.0/8 , ,plc.lab:502,');
    assert.deepEqual(problems, []);
    assert.deepEqual(
      entries.map((e) => e.text),
      ['10.0.0.0/8', 'plc.lab:502'],
    );
  });
});
