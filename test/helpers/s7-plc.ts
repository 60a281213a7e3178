import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** A PLC (node-snap7's server) in a child process: s7-plc-process.cjs says why. */
export interface S7Plc {
  /** The data block DB1 as the PLC holds it now. */
  db1(): Promise<Buffer>;
  /** The PLC goes away at once (SIGKILL), as when it loses power. */
  kill(): Promise<void>;
}

const SCRIPT = fileURLToPath(new URL('./s7-plc-process.cjs', import.meta.url));

type Message = { ready?: true; error?: string; db1?: string };

function next(child: ChildProcess): Promise<Message> {
  return new Promise((resolve, reject) => {
    const onExit = (code: number | null) => reject(new Error(`the PLC process exited (${code})`));
    child.once('exit', onExit);
    child.once('message', (message: Message) => {
      child.off('exit', onExit);
      resolve(message);
    });
  });
}

/** Starts a PLC on `port` with `db1` as its data block DB1. */
export async function startS7Plc(port: number, db1: Buffer): Promise<S7Plc> {
  const child = fork(SCRIPT, [String(port), db1.toString('hex')], { execArgv: [], stdio: 'inherit' });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const first = await next(child);
  if (!first.ready) throw new Error(first.error ?? 'the PLC did not start');
  return {
    async db1() {
      const answer = next(child);
      child.send('db1');
      return Buffer.from((await answer).db1 ?? '', 'hex');
    },
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}
