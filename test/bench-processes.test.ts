import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';

/**
 * Benchmarks leave no process behind: each run carries a mark in its environment, which every process it
 * starts inherits; afterwards no process on the machine may carry it.
 */
function marked(mark: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/environ`, 'latin1').split('\0').includes(mark))
        pids.push(Number(entry));
    } catch {
      // gone, or not ours to read
    }
  }
  return pids;
}

async function until(check: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (check()) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return check();
}

function bench(script: string, args: string[], env: Record<string, string>) {
  const mark = `MERIDIAN_BENCH_TEST_MARK=${randomBytes(6).toString('hex')}`;
  const [name, value] = mark.split('=') as [string, string];
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', script, ...args], {
    env: { ...process.env, ...env, [name]: value },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (c: Buffer) => {
    output += c.toString();
  });
  child.stderr?.on('data', (c: Buffer) => {
    output += c.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, mark, exited, output: () => output };
}

describe('benchmarks: the load generator and their processes', () => {
  const noWrk = mkdtempSync(join(tmpdir(), 'meridian-no-wrk-'));
  const leftovers: number[] = [];
  after(() => {
    rmSync(noWrk, { recursive: true, force: true });
    for (const pid of leftovers) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {}
    }
  });

  for (const script of ['bench/uns/http-publish.bench.ts', 'bench/oauth2/token-issuance.bench.ts']) {
    it(`${script} without wrk names the package to install, starts nothing and leaves nothing`, async () => {
      // A PATH on which there is no wrk (the benchmark starts Node by its absolute path).
      const run = bench(script, [], { PATH: noWrk });
      assert.equal(await run.exited, 2, run.output());
      assert.match(run.output(), /wrk, the load generator .* is not installed: apt-get install -y wrk/);
      assert.doesNotMatch(run.output(), /listening|Error: spawn/);
      const left = marked(run.mark);
      leftovers.push(...left);
      assert.deepEqual(left, []);
    });
  }

  it('a benchmark run to its end leaves no process (MQTT bench: aedes and the clients in processes of their own)', async () => {
    const run = bench('bench/uns/mqtt.bench.ts', ['sqlite', '200'], { ROUNDS: '1', WARMUPS: '0' });
    assert.equal(await run.exited, 0, run.output());
    assert.match(run.output(), /stored values: 200 of 200/);
    const gone = await until(() => marked(run.mark).length === 0, 5000);
    leftovers.push(...marked(run.mark));
    assert.ok(gone, `processes left: ${marked(run.mark).join(' ')}`);
  });

  // SIGINT as Ctrl-C sends it (SIGTERM takes the same path).
  for (const signal of ['SIGINT'] as const) {
    it(`${signal} (Ctrl-C) during a benchmark stops every process it started`, async () => {
      const run = bench('bench/uns/mqtt.bench.ts', ['sqlite', '1000000'], { ROUNDS: '6', WARMUPS: '3' });
      // The relaunched benchmark, the aedes process and the clients' process: three besides the first.
      const started = await until(() => marked(run.mark).length >= 4, 90_000);
      assert.ok(started, `the benchmark started its processes; output:\n${run.output()}`);
      run.child.kill(signal);
      const code = await run.exited;
      assert.equal(code, signal === 'SIGINT' ? 130 : 143, run.output());
      const gone = await until(() => marked(run.mark).length === 0, 10_000);
      leftovers.push(...marked(run.mark));
      assert.ok(gone, `processes left: ${marked(run.mark).join(' ')}`);
    });
  }
});
