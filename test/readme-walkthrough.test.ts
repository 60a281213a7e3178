import assert from 'node:assert/strict';
import { type ChildProcessWithoutNullStreams, execFileSync, spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createTestDatabase, type TestDatabase, testDialects } from './helpers/dialects.js';
import { freePort } from './helpers/free-port.js';

/**
 * README.md's walkthrough, run as written: every fenced block marked `sh walkthrough`, in order, in one
 * bash, from a directory that stands for the clone (package.json, node_modules and web linked, the server
 * bundled from the sources into it). Only the ports change (8080, 1884 and the simulated Modbus device's
 * 5020 become free ones); every
 * `# -> answer` line must match a line the commands before it printed (`...` stands for anything).
 */
const REPO = resolve('.');
const MARKED_BLOCK = /^```sh walkthrough\n([\s\S]*?)^```$/gm;
const ANSWER = /^# -> (.*)$/;

export interface WalkthroughStep {
  commands: string;
  answers: string[];
}

/** The marked blocks of `markdown`, cut into steps: commands, then the answers shown after them. */
export function walkthroughSteps(markdown: string): WalkthroughStep[] {
  const steps: WalkthroughStep[] = [];
  for (const [, block] of markdown.matchAll(MARKED_BLOCK)) {
    let step: WalkthroughStep = { commands: '', answers: [] };
    for (const line of (block ?? '').split('\n')) {
      const answer = ANSWER.exec(line);
      if (answer) step.answers.push(answer[1] ?? '');
      else {
        if (step.answers.length > 0) {
          steps.push(step);
          step = { commands: '', answers: [] };
        }
        step.commands += `${line}\n`;
      }
    }
    if (step.commands.trim() || step.answers.length > 0) steps.push(step);
  }
  return steps;
}

/** An answer shown in the README as a whole-line pattern: `...` is anything, the rest literal. */
function answerPattern(shown: string): RegExp {
  const literal = shown.split('...').map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${literal.join('.*')}$`);
}

/** A bash that reads commands from its standard input: the steps share its variables and jobs. */
class Shell {
  private output = '';
  private readonly child: ChildProcessWithoutNullStreams;
  private step = 0;

  constructor(cwd: string, env: Record<string, string | undefined>) {
    this.child = spawn('bash', ['--noprofile', '--norc'], { cwd, env, detached: true });
    this.child.stdout.on('data', (chunk: Buffer) => {
      this.output += chunk.toString();
    });
    this.child.stderr.on('data', (chunk: Buffer) => {
      this.output += chunk.toString();
    });
  }

  /** Runs `commands`; resolves with what they printed and the status of the last one. */
  async run(commands: string, timeoutMs = 120_000): Promise<{ printed: string; status: number }> {
    const marker = `__walkthrough_step_${++this.step}__`;
    const start = this.output.length;
    this.child.stdin.write(`${commands}\nprintf '\\n${marker} %s\\n' "$?"\n`);
    const done = new RegExp(`\\n${marker} (\\d+)\\n`);
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const match = done.exec(this.output.slice(start));
      if (match) {
        return {
          printed: this.output.slice(start, start + (match.index ?? 0)),
          status: Number(match[1]),
        };
      }
      if (Date.now() > deadline || this.child.exitCode !== null) {
        throw new Error(`step did not finish:\n${commands}\nprinted:\n${this.output.slice(start)}`);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** Ends the shell and everything it started (the server among them): its whole process group. */
  async close(): Promise<void> {
    const pid = this.child.pid;
    if (!pid) return;
    const signal = (name: NodeJS.Signals | 0) => {
      try {
        process.kill(-pid, name);
        return true;
      } catch {
        return false; // the group is gone
      }
    };
    signal('SIGTERM');
    for (let i = 0; i < 100; i++) {
      await new Promise((r) => setTimeout(r, 100));
      if (!signal(0)) return;
    }
    signal('SIGKILL');
  }
}

describe('README walkthrough: the marked blocks', () => {
  it('are found, in order, from the start to the MQTT publish, and each shows answers', () => {
    const steps = walkthroughSteps(readFileSync('README.md', 'utf8'));
    const all = steps.map((s) => s.commands).join('');
    assert.ok(steps.length >= 8, `${steps.length} steps`);
    assert.match(steps[0]?.commands ?? '', /npm start/);
    for (const needed of [
      'ORG=',
      'CSRF=',
      'USER_ID=',
      'CLIENT_ID=',
      'TOKEN=',
      'mosquitto_pub -h localhost -p 1884',
    ]) {
      assert.ok(all.includes(needed), `the walkthrough sets or runs ${needed}`);
    }
    assert.doesNotMatch(all, /<[a-z ]+>/, 'no placeholder left for the reader to fill in');
    assert.ok(steps.filter((s) => s.answers.length > 0).length >= 8);
  });

  it('cuts a block into steps at its answers and matches answers with ... as anything', () => {
    const steps = walkthroughSteps(
      'text\n```sh walkthrough\nA=1\necho $A\n# -> 1\necho x\n# -> {"a":...}\n```\n```sh\nnot run\n```\n',
    );
    assert.deepEqual(steps, [
      { commands: 'A=1\necho $A\n', answers: ['1'] },
      { commands: 'echo x\n', answers: ['{"a":...}'] },
    ]);
    assert.match('{"a":{"b":2}}', answerPattern('{"a":...}'));
    assert.doesNotMatch('{"b":1}', answerPattern('{"a":...}'));
    assert.doesNotMatch('x1', answerPattern('1'));
  });
});

for (const dialect of testDialects()) {
  describe(`README walkthrough, run against the built server [${dialect}]`, () => {
    let database: TestDatabase;
    let clone: string;
    let shell: Shell | undefined;
    let ports: { http: number; mqtt: number; modbus: number };

    before(async () => {
      database = await createTestDatabase(dialect);
      clone = mkdtempSync(join(tmpdir(), 'meridian-readme-'));
      for (const entry of ['package.json', 'node_modules', 'web'])
        symlinkSync(join(REPO, entry), join(clone, entry));
      mkdirSync(join(clone, 'bin'));
      copyFileSync(join(REPO, 'bin', 'meridian.js'), join(clone, 'bin', 'meridian.js'));
      execFileSync(process.execPath, ['scripts/bundle.mjs', join(clone, 'dist', 'bundle', 'meridian.mjs')]);
      ports = { http: await freePort(), mqtt: await freePort(), modbus: await freePort() };
    });
    after(async () => {
      await shell?.close();
      rmSync(clone, { recursive: true, force: true });
      await database?.drop();
    });

    it('every command runs and prints the answer the README shows', async () => {
      const steps = walkthroughSteps(readFileSync('README.md', 'utf8'));
      shell = new Shell(clone, {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        MERIDIAN_DATA_DIR: database.dataDir,
        DATABASE_URL: database.databaseUrl,
        MERIDIAN_LOG_LEVEL: 'warn',
      });
      for (const step of steps) {
        const commands = step.commands
          .replace(/\b8080\b/g, String(ports.http))
          .replace(/\b1884\b/g, String(ports.mqtt))
          .replace(/\b5020\b/g, String(ports.modbus));
        const { printed, status }: { printed: string; status: number } = await shell.run(commands);
        const context = (): string =>
          `commands:\n${commands}\nprinted:\n${printed}\nmeridian.log:\n${safeRead(join(clone, 'meridian.log'))}`;
        assert.equal(status, 0, `the step ends with status 0\n${context()}`);
        const lines = printed.split('\n').map((l) => l.trim());
        let from = 0;
        for (const shown of step.answers) {
          const pattern = answerPattern(shown);
          const at = lines.findIndex((line, i) => i >= from && pattern.test(line));
          assert.ok(at >= 0, `the answer shown, ${shown}, is printed\n${context()}`);
          from = at + 1;
        }
      }
    });
  });
}

function safeRead(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '(none)';
  }
}
