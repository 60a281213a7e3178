import type { KeyObject } from 'node:crypto';
import type { Worker } from 'node:worker_threads';
import { startWorker, type WorkerModule } from '../../../workers/worker-module.js';
import type { SignedToken, SigningMessage, SigningThreadData } from './signing.worker.js';

/**
 * ES256 signatures on one dedicated thread, handed over in small batches.
 *
 * The token endpoint used to sign on libuv's thread pool (`crypto.sign` with a callback). Profiled under
 * load (perf), a tenth of the event loop went to dispatching those jobs, mostly in the futex that wakes
 * an idle pool thread for each token. Here the signing inputs of one event-loop turn go to the thread in
 * one message (at most MAX_BATCH a message, so that the thread starts on the first ones while the event
 * loop handles the next requests), and the tokens of a batch come back in one message, whole: the thread
 * also encodes each payload (base64url), which was a few percent of the event loop's time per token. Server CPU per client-credentials token went from about 135 to 114 µs (84 to 68 µs on the
 * event loop) and throughput up by a quarter (bench/oauth2/token-issuance.bench.ts).
 *
 * The thread is started on first use and is unreferenced while nothing is in flight, so it never keeps a
 * process alive. If it dies, what was in flight is rejected and the next signature starts a new one.
 * The thread's program: signing.worker.ts.
 */
export interface SigningThread {
  /**
   * The compact JWS (RFC 7515 §7.1) of `payload`, a JSON text, under `header`, the base64url-encoded
   * protected header, signed ES256 (IEEE P1363) with `key`. The payload is encoded on the thread too.
   */
  signJws(header: string, payload: string, key: KeyObject): Promise<string>;
}

/** Inputs handed over in one message at most; a batch is also sent at the end of each event-loop turn. */
export const MAX_BATCH = 8;

interface PendingSignature {
  header: string;
  payload: string;
  key: KeyObject;
  resolve: (signature: string) => void;
  reject: (error: Error) => void;
}

/**
 * The thread runs under SCHED_BATCH (workers/thread-priority.ts): the event loop wakes it for every
 * batch, and on two cores a woken thread took the event loop's core first, as the SQLite threads did
 * (SQLITE_THREAD_NICENESS, storage/sqlite/sqlite-thread-serve.ts). In CPU profiles of the token bench's
 * server under load, postMessage to this thread was 12% of the event loop's busy samples (5% at niceness
 * +5, 7% as a batch thread, in runs at other moments of the same load), where handing a token over takes
 * 2-3 µs of CPU (measured apart): the rest was the event loop waiting for its core. A batch thread keeps its full share of the CPU; the SQLite
 * threads' lower priority instead (this niceness, where SCHED_BATCH cannot be had) starved it on a busy
 * host. Alternated against the thread before it under load average 16 (so not results, only a check):
 * at niceness +5, 784 tokens/s against 1,295/s; as a batch thread, 825 and 967/s against 879 and 1,005/s.
 */
export const SIGNING_THREAD_NICENESS = 5;

/** The thread's program. */
const SIGNING_WORKER: WorkerModule = { name: 'signing', from: import.meta.url };

/** A signing thread, started on first use. `program` is for tests that need a thread that misbehaves. */
export function createSigningThread(program: WorkerModule = SIGNING_WORKER): SigningThread {
  let worker: Worker | undefined;
  // Key ids are per worker: a new worker is sent each key again.
  let keyIds = new WeakMap<KeyObject, number>();
  let nextKeyId = 0;
  let queued: PendingSignature[] = [];
  let flushScheduled = false;
  // Batches sent, answered in order.
  const inFlight: PendingSignature[][] = [];

  const fail = (error: Error) => {
    const lost = inFlight.splice(0).flat();
    worker = undefined;
    keyIds = new WeakMap();
    for (const pending of lost) pending.reject(error);
  };

  const start = (): Worker => {
    const started = startWorker(program, {
      workerData: { fallbackNiceness: SIGNING_THREAD_NICENESS } satisfies SigningThreadData,
    });
    started.unref();
    started.on('message', (tokens: SignedToken[]) => {
      const batch = inFlight.shift();
      if (!batch) return;
      for (let i = 0; i < batch.length; i++) {
        const token = tokens[i];
        if (typeof token === 'string') batch[i]!.resolve(token);
        else batch[i]!.reject(new Error(`ES256 signing failed: ${token?.error ?? 'no answer'}`));
      }
      if (inFlight.length === 0 && worker === started) started.unref();
    });
    started.on('error', (error) => {
      if (worker === started) fail(error);
    });
    started.on('exit', (code) => {
      if (worker === started) fail(new Error(`the signing thread exited (code ${code})`));
    });
    return started;
  };

  const keyIdOf = (target: Worker, key: KeyObject): number => {
    let id = keyIds.get(key);
    if (id === undefined) {
      id = nextKeyId++;
      keyIds.set(key, id);
      target.postMessage({ keyId: id, key } satisfies SigningMessage);
    }
    return id;
  };

  const flush = () => {
    flushScheduled = false;
    if (queued.length === 0) return;
    const batch = queued;
    queued = [];
    worker ??= start();
    const target = worker;
    // Keys are sent to the thread before the first batch that uses them, once per thread.
    const batchKeyIds = batch.map((p) => keyIdOf(target, p.key));
    if (inFlight.length === 0) target.ref();
    inFlight.push(batch);
    target.postMessage({
      headers: batch.map((p) => p.header),
      payloads: batch.map((p) => p.payload),
      keyIds: batchKeyIds,
    } satisfies SigningMessage);
  };

  return {
    signJws(header, payload, key) {
      return new Promise<string>((resolve, reject) => {
        queued.push({ header, payload, key, resolve, reject });
        if (queued.length >= MAX_BATCH) flush();
        else if (!flushScheduled) {
          flushScheduled = true;
          setImmediate(flush);
        }
      });
    },
  };
}
