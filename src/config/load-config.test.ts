import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from './load-config.js';

describe('loadConfig', () => {
  it('applies the documented defaults', () => {
    const config = loadConfig({});
    assert.equal(config.httpHost, '0.0.0.0');
    assert.equal(config.httpPort, 8080);
    assert.equal(config.mqttPort, 1883);
    assert.equal(config.dataDir, './data');
    assert.equal(config.databaseUrl, undefined);
    assert.equal(config.topicPrefix, 'v1');
    assert.equal(config.accessTokenTtl, 3600);
    assert.equal(config.adminEmail, 'admin@localhost');
    assert.equal(config.logLevel, 'info');
    assert.equal(config.issuer, 'http://localhost:8080');
  });

  it('reads the fixed environment variable names', () => {
    const config = loadConfig({
      MERIDIAN_HTTP_PORT: '9090',
      MERIDIAN_MQTT_PORT: '0',
      DATABASE_URL: 'postgres://db.example:5432/meridian',
      MERIDIAN_ISSUER: 'https://meridian.example/',
      MERIDIAN_UNS_TOPIC_PREFIX: 'v2',
      MERIDIAN_LOG_LEVEL: 'debug',
    });
    assert.equal(config.httpPort, 9090);
    assert.equal(config.mqttPort, 0);
    assert.equal(config.databaseUrl, 'postgres://db.example:5432/meridian');
    assert.equal(config.issuer, 'https://meridian.example');
    assert.equal(config.topicPrefix, 'v2');
    assert.equal(config.logLevel, 'debug');
  });

  it('reports every problem at once', () => {
    try {
      loadConfig({
        MERIDIAN_HTTP_PORT: 'eighty',
        MERIDIAN_MQTT_PORT: '70000',
        DATABASE_URL: 'mysql://x',
        MERIDIAN_LOG_LEVEL: 'loud',
        MERIDIAN_ADMIN_PASSWORD: 'short',
      });
      assert.fail('loadConfig accepted invalid values');
    } catch (error) {
      assert.ok(error instanceof ConfigError);
      assert.equal(error.problems.length, 5);
      assert.match(error.message, /MERIDIAN_HTTP_PORT must be a whole number/);
      assert.match(error.message, /MERIDIAN_MQTT_PORT must be between 0 and 65535/);
      assert.match(error.message, /DATABASE_URL must use one of postgres: postgresql:/);
      assert.match(error.message, /MERIDIAN_LOG_LEVEL must be one of/);
      assert.match(error.message, /MERIDIAN_ADMIN_PASSWORD must be at least 12 characters/);
      assert.doesNotMatch(error.message, /short/, 'a secret value is never echoed');
    }
  });

  it('refuses a topic prefix that could not be a topic segment', () => {
    assert.throws(() => loadConfig({ MERIDIAN_UNS_TOPIC_PREFIX: 'v1/x' }), /MERIDIAN_UNS_TOPIC_PREFIX/);
  });

  it('reads a config file, with the environment taking precedence', () => {
    const dir = mkdtempSync(join(tmpdir(), 'meridian-config-'));
    const file = join(dir, 'meridian.json');
    writeFileSync(file, JSON.stringify({ MERIDIAN_HTTP_PORT: 7000, MERIDIAN_UNS_TOPIC_PREFIX: 'v3' }));
    const config = loadConfig({ MERIDIAN_CONFIG_FILE: file, MERIDIAN_UNS_TOPIC_PREFIX: 'v4' });
    assert.equal(config.httpPort, 7000);
    assert.equal(config.topicPrefix, 'v4');
  });

  it('refuses unknown keys in a config file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'meridian-config-'));
    const file = join(dir, 'meridian.json');
    writeFileSync(file, JSON.stringify({ MERIDIAN_HTTP_PROT: 7000 }));
    assert.throws(() => loadConfig({ MERIDIAN_CONFIG_FILE: file }), /unknown key MERIDIAN_HTTP_PROT/);
  });

  it('reads MERIDIAN_TRUST_PROXY as a hop count or trusted addresses and CIDRs', () => {
    assert.equal(loadConfig({}).trustProxy, false);
    assert.equal(loadConfig({ MERIDIAN_TRUST_PROXY: 'false' }).trustProxy, false);
    assert.equal(loadConfig({ MERIDIAN_TRUST_PROXY: '0' }).trustProxy, false);
    assert.equal(loadConfig({ MERIDIAN_TRUST_PROXY: '2' }).trustProxy, 2);
    assert.deepEqual(
      loadConfig({ MERIDIAN_TRUST_PROXY: '10.0.0.0/8, 192.168.1.10,fd00::/8,loopback' }).trustProxy,
      ['10.0.0.0/8', '192.168.1.10', 'fd00::/8', 'loopback'],
    );
  });

  it('refuses MERIDIAN_TRUST_PROXY=true, naming the alternatives, and malformed addresses', () => {
    for (const value of ['true', 'TRUE', 'yes', 'on']) {
      assert.throws(
        () => loadConfig({ MERIDIAN_TRUST_PROXY: value }),
        (error: unknown) =>
          error instanceof ConfigError &&
          /MERIDIAN_TRUST_PROXY=\S+ would trust any X-Forwarded-For/.test(error.message) &&
          /number of proxies/.test(error.message) &&
          /addresses\/CIDRs/.test(error.message),
      );
    }
    for (const value of ['10.0.0.0/33', '10.0.0', 'proxy.example', '10.0.0.1/8/1', '99']) {
      assert.throws(() => loadConfig({ MERIDIAN_TRUST_PROXY: value }), /MERIDIAN_TRUST_PROXY/, value);
    }
  });

  it('reads MERIDIAN_EGRESS_ALLOW and _DENY as lists of entries, empty when unset', () => {
    const unset = loadConfig({});
    assert.deepEqual([unset.egressAllow, unset.egressDeny], [[], []]);
    const config = loadConfig({
      MERIDIAN_EGRESS_ALLOW: '127.0.0.1:5020, [::1]:4840,sim.lab ,*.lab.example,10.0.0.0/8,',
      MERIDIAN_EGRESS_DENY: '10.20.0.0/16,fd00::/8',
    });
    assert.deepEqual(config.egressAllow, [
      '127.0.0.1:5020',
      '[::1]:4840',
      'sim.lab',
      '*.lab.example',
      '10.0.0.0/8',
    ]);
    assert.deepEqual(config.egressDeny, ['10.20.0.0/16', 'fd00::/8']);
  });

  it('reports every bad egress entry, each named, with the other problems', () => {
    try {
      loadConfig({
        MERIDIAN_EGRESS_ALLOW: '127.0.0.1:99999,10.0.0.0/40,ok.lab',
        MERIDIAN_EGRESS_DENY: 'http://metadata',
        MERIDIAN_HTTP_PORT: 'eighty',
      });
      assert.fail('loadConfig accepted bad egress entries');
    } catch (error) {
      assert.ok(error instanceof ConfigError);
      assert.equal(error.problems.length, 4, error.message);
      assert.match(error.message, /MERIDIAN_EGRESS_ALLOW: "127\.0\.0\.1:99999" has no port from 1 to 65535/);
      assert.match(error.message, /MERIDIAN_EGRESS_ALLOW: "10\.0\.0\.0\/40" is not a CIDR/);
      assert.match(error.message, /MERIDIAN_EGRESS_DENY: "http:\/\/metadata"/);
      assert.match(error.message, /MERIDIAN_HTTP_PORT must be a whole number/);
    }
  });
});
