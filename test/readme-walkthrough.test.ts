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
 * bash, from a directory that stands for the clone (package.json, node_modules, web and scripts linked,
 * the server bundled from the sources into it). Only the ports change (8080, 1884 and the simulated
 * devices' 5020 (Modbus) and 4840 (OPC UA) become free ones). A step fails when a command in it fails
 * (an ERR trap: what `set -e` would stop at, without ending the shell), and every `# -> answer` line must
 * match a line the commands before it printed (`...` stands for anything). A failure names the README line.
 */
const REPO = resolve('.');
const MARKED_BLOCK = /^```sh walkthrough\n([\s\S]*?)^```$/gm;
const ANSWER = /^# -> (.*)$/;
const FAILED = '__walkthrough_command_failed__';

export interface WalkthroughStep {
  /** The README line (1-based) of the step's first command. */
  line: number;
  commands: string;
  answers: string[];
}

/** The marked blocks of `markdown`, cut into steps: commands, then the answers shown after them. */
export function walkthroughSteps(markdown: string): WalkthroughStep[] {
  const steps: WalkthroughStep[] = [];
  for (const match of markdown.matchAll(MARKED_BLOCK)) {
    const first = markdown.slice(0, match.index).split('\n').length + 1;
    const lines = (match[1] ?? '').split('\n');
    let step: WalkthroughStep = { line: first, commands: '', answers: [] };
    lines.forEach((line, i) => {
      const answer = ANSWER.exec(line);
      if (answer) step.answers.push(answer[1] ?? '');
      else {
        if (step.answers.length > 0) {
          steps.push(step);
          step = { line: first + i, commands: '', answers: [] };
        }
        step.commands += `${line}\n`;
      }
    });
    if (step.commands.trim() || step.answers.length > 0) steps.push(step);
  }
  return steps;
}

/**
 * The shell blocks of the walkthrough (from "A first walkthrough" to the reference) that are not marked:
 * each with its README line. The walkthrough has none; the install blocks come before it.
 */
export function unmarkedWalkthroughBlocks(markdown: string): number[] {
  const lines = markdown.split('\n');
  const start = lines.findIndex((l) => l.startsWith('## A first walkthrough'));
  const end = lines.findIndex(
    (l, i) => i > start && /^## /.test(l) && !l.startsWith('## A first walkthrough'),
  );
  const unmarked: number[] = [];
  let inside = false;
  for (let i = start; i < (end < 0 ? lines.length : end); i++) {
    const line = lines[i] ?? '';
    if (!line.startsWith('```')) continue;
    if (!inside && /^```(sh|bash|shell)\b/.test(line) && line !== '```sh walkthrough') unmarked.push(i + 1);
    inside = !inside;
  }
  return unmarked;
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
    // a failing command (outside a condition) prints the marker, what failed and its status
    this.child.stdin.write(`trap 'printf "\\n${FAILED} %s: %s\\n" "$?" "$BASH_COMMAND"' ERR\n`);
    this.child.stdout.on('data', (chunk: Buffer) => {
      this.output += chunk.toString();
    });
    this.child.stderr.on('data', (chunk: Buffer) => {
      this.output += chunk.toString();
    });
  }

  /** Runs `commands`; resolves with what they printed and the status of the last one. */
  async run(commands: string, timeoutMs = 150_000): Promise<{ printed: string; status: number }> {
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
  it('reports a failing command of a step, even when the step ends well, and keeps variables', async () => {
    const shell = new Shell(tmpdir(), { PATH: process.env.PATH });
    try {
      const failing = await shell.run('A=7\nfalse\necho after');
      assert.equal(failing.status, 0);
      assert.match(failing.printed, new RegExp(`^${FAILED} 1: false$`, 'm'));
      const next = await shell.run('echo "$A"\nuntil true; do :; done\ngrep -q x /dev/null || echo none');
      assert.doesNotMatch(next.printed, new RegExp(FAILED), 'conditions are not failures');
      assert.match(next.printed, /^7$/m);
    } finally {
      await shell.close();
    }
  });

  it('are every shell block of the walkthrough: none is left unmarked', () => {
    assert.deepEqual(unmarkedWalkthroughBlocks(readFileSync('README.md', 'utf8')), []);
    assert.deepEqual(
      unmarkedWalkthroughBlocks(
        '## A first walkthrough\n```sh walkthrough\na\n```\n```sh\nb\n```\n## Reference\n```sh\nc\n```\n',
      ),
      [5],
    );
  });

  it('are found, in order, from the start to the end of the server, and each shows answers', () => {
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
      'scripts/walkthrough-devices.mjs',
    ]) {
      assert.ok(all.includes(needed), `the walkthrough sets or runs ${needed}`);
    }
    assert.doesNotMatch(all, /<[a-z ]+>/, 'no placeholder left for the reader to fill in');
    assert.ok(steps.filter((s) => s.answers.length > 0).length >= 8);
    assert.match(steps.at(-1)?.commands ?? '', /kill %1/, 'the server runs until the last step');
  });

  it('cuts a block into steps at its answers and matches answers with ... as anything', () => {
    const steps = walkthroughSteps(
      'text\n```sh walkthrough\nA=1\necho $A\n# -> 1\necho x\n# -> {"a":...}\n```\n```sh\nnot run\n```\n',
    );
    assert.deepEqual(steps, [
      { line: 3, commands: 'A=1\necho $A\n', answers: ['1'] },
      { line: 6, commands: 'echo x\n', answers: ['{"a":...}'] },
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
    let ports: { http: number; mqtt: number; modbus: number; opcua: number };

    before(async () => {
      database = await createTestDatabase(dialect);
      clone = mkdtempSync(join(tmpdir(), 'meridian-readme-'));
      for (const entry of ['package.json', 'node_modules', 'web', 'scripts'])
        symlinkSync(join(REPO, entry), join(clone, entry));
      mkdirSync(join(clone, 'bin'));
      copyFileSync(join(REPO, 'bin', 'meridian.js'), join(clone, 'bin', 'meridian.js'));
      execFileSync(process.execPath, ['scripts/bundle.mjs', join(clone, 'dist', 'bundle', 'meridian.mjs')]);
      ports = {
        http: await freePort(),
        mqtt: await freePort(),
        modbus: await freePort(),
        opcua: await freePort(),
      };
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
          .replace(/\b5020\b/g, String(ports.modbus))
          .replace(/\b4840\b/g, String(ports.opcua));
        const { printed, status }: { printed: string; status: number } = await shell.run(commands);
        const context = (): string =>
          `README.md line ${step.line}, commands:\n${commands}\nprinted:\n${printed}\n` +
          `meridian.log:\n${safeRead(join(clone, 'meridian.log'))}`;
        const failed = printed.split('\n').find((line) => line.startsWith(FAILED));
        assert.equal(failed, undefined, `every command of the step succeeds\n${context()}`);
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
