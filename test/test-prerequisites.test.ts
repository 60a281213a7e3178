import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { describe, it } from 'node:test';
import { freePort } from './helpers/free-port.js';

interface Run {
  code: number | null;
  output: string;
  ms: number;
}

/** Runs a command in a process group of its own; the group is killed when it outlives `timeoutMs`. */
function run(command: string, args: string[], env: Record<string, string>, timeoutMs = 30_000): Promise<Run> {
  const started = Date.now();
  const child = spawn(command, args, { env: { ...process.env, ...env }, detached: true });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const timer = setTimeout(() => {
    if (child.pid) process.kill(-child.pid, 'SIGKILL');
  }, timeoutMs);
  return new Promise((resolve) =>
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output, ms: Date.now() - started });
    }),
  );
}

const check = (env: Record<string, string>) =>
  run(process.execPath, ['scripts/check-test-prerequisites.mjs'], env);
const verdicts = (output: string) => output.split('\n').filter((l) => l.startsWith('npm test cannot run'));

describe('npm test: the prerequisite check', () => {
  it('with PostgreSQL unreachable, npm test stops within 30 s with one line: the fix and where else to point', async () => {
    const unreachable = `postgres://postgres@127.0.0.1:${await freePort()}/postgres`;
    const result = await run('npm', ['test'], { MERIDIAN_TEST_PG_URL: unreachable });
    assert.ok(result.ms < 30_000, `stopped after ${result.ms} ms`);
    assert.notEqual(result.code, 0);
    const lines = verdicts(result.output);
    assert.equal(lines.length, 1, result.output);
    const line = lines[0] ?? '';
    assert.match(line, /missing PostgreSQL at postgres:\/\/…@127\.0\.0\.1:\d+\/postgres \(ECONNREFUSED\)/);
    assert.match(line, /fix: .*service postgresql start/);
    assert.match(line, /MERIDIAN_TEST_PG_URL=postgres:\/\//);
    assert.match(line, /MERIDIAN_TEST_DIALECTS=sqlite/);
    // Nothing after the check ran: no lint, no type check, no test.
    assert.doesNotMatch(result.output, /biome check|tsc -p|run-tests/);
  });

  it('names every missing tool and installs them all with one command', async () => {
    const result = await check({
      CHROMIUM_PATH: '/nonexistent/chromium',
      MERIDIAN_TEST_MOSQUITTO: '/nonexistent/mosquitto',
      MERIDIAN_TEST_PYTHON: '/nonexistent/python3',
      MERIDIAN_TEST_MQTT_URL: `mqtt://127.0.0.1:${await freePort()}`,
    });
    assert.equal(result.code, 1);
    const lines = result.output.trim().split('\n');
    assert.equal(lines.length, 1, result.output);
    const line = lines[0] ?? '';
    assert.match(line, /python3-authlib \(\/nonexistent\/python3\)/);
    assert.match(line, /Chromium \(\/nonexistent\/chromium\)/);
    assert.match(line, /Mosquitto \(\/nonexistent\/mosquitto\)/);
    assert.match(line, /an MQTT broker at mqtt:\/\/127\.0\.0\.1:\d+/);
    const install = /apt-get install -y ([a-z0-9 -]+)/.exec(line)?.[1]?.trim().split(' ') ?? [];
    for (const pkg of ['python3-authlib', 'chromium', 'mosquitto']) assert.ok(install.includes(pkg), line);
    assert.equal(install.filter((p) => p === 'mosquitto').length, 1, 'each package named once');
    assert.match(line, /&& (sudo )?service mosquitto start/);
  });

  it('names only what is missing: a tool that is present is not named', async () => {
    const result = await check({
      CHROMIUM_PATH: process.execPath,
      MERIDIAN_TEST_PYTHON: '/nonexistent/python3',
    });
    assert.equal(result.code, 1);
    assert.doesNotMatch(result.output, /Chromium/);
    assert.match(result.output, /python3-authlib/);
  });

  it('with MERIDIAN_TEST_DIALECTS=sqlite, PostgreSQL is not needed', async () => {
    const result = await check({
      MERIDIAN_TEST_DIALECTS: 'sqlite',
      MERIDIAN_TEST_PG_URL: `postgres://postgres@127.0.0.1:${await freePort()}/postgres`,
      MERIDIAN_TEST_PYTHON: '/nonexistent/python3',
    });
    assert.equal(result.code, 1);
    assert.doesNotMatch(result.output, /PostgreSQL|MERIDIAN_TEST_PG_URL/);
    assert.match(result.output, /python3-authlib/);
  });
});
