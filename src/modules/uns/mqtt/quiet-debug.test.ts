import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
// The broker, as the server loads it: quiet-debug first, then aedes and mqtt-packet.
import './embedded/embedded-broker.js';
import { extname } from 'node:path';
import { quietDebug, quietNamespaces } from './quiet-debug.js';

const require = createRequire(import.meta.url);
type Factory = Parameters<typeof quietDebug>[0] & { enable(namespaces: string): void };

describe('quiet debug loggers', () => {
  it('makes a logger that does nothing for a namespace that is off, and the real one for one that is on', () => {
    const factory = require('debug') as Factory;
    const quiet = quietDebug(factory);
    factory.enable('meridian-test:on');
    try {
      const on = quiet('meridian-test:on');
      assert.equal(on.enabled, true);
      assert.equal(on.namespace, 'meridian-test:on');
      const off = quiet('meridian-test:off');
      assert.equal(off.enabled, false);
      assert.equal(off.namespace, 'meridian-test:off');
      assert.equal(off('%o', { a: 1 }), undefined);
      assert.ok(quietNamespaces.has('meridian-test:off'));
      assert.ok(!quietNamespaces.has('meridian-test:on'));
    } finally {
      factory.enable(process.env.DEBUG ?? '');
    }
  });

  it("gives mqtt-packet's parser and writer quiet loggers unless DEBUG names them", () => {
    const enabled = (require('debug') as { enabled(ns: string): boolean }).enabled;
    for (const namespace of ['mqtt-packet:parser', 'mqtt-packet:writeToStream']) {
      assert.equal(quietNamespaces.has(namespace), !enabled(namespace), namespace);
    }
  });

  it('still prints what DEBUG names at start-up', () => {
    const quietModule = fileURLToPath(new URL(`./quiet-debug${extname(import.meta.url)}`, import.meta.url));
    const script = `
      await import(${JSON.stringify(quietModule)});
      const { createRequire } = await import('node:module');
      const mqtt = createRequire(${JSON.stringify(quietModule)})('mqtt-packet');
      mqtt.parser().parse(mqtt.generate({ cmd: 'pingreq' }));`;
    const run = (debug: string) =>
      spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
        env: { ...process.env, DEBUG: debug },
        encoding: 'utf8',
      });
    const named = run('mqtt-packet:parser');
    assert.equal(named.status, 0, named.stderr);
    assert.match(named.stderr, /mqtt-packet:parser parse: current state: _parseHeader/);
    const unnamed = run('');
    assert.equal(unnamed.status, 0, unnamed.stderr);
    assert.doesNotMatch(unnamed.stderr, /mqtt-packet:parser/);
  });
});
