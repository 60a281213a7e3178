import type { KeyObject } from 'node:crypto';
import { Worker } from 'node:worker_threads';

/**
 * ES256 signatures on one dedicated thread, handed over in small batches.
 *
 * The token endpoint used to sign on libuv's thread pool (`crypto.sign` with a callback). Profiled under
 * load (perf), a tenth of the event loop went to dispatching those jobs, mostly in the futex that wakes
 * an idle pool thread for each token. Here the signing inputs go to the thread in batches, and the tokens
 * of a batch come back in one message, whole: the thread also encodes each payload (base64url), which was
 * a few percent of the event loop's time per token.
 *
 * At most MAX_IN_FLIGHT batches are with the thread at once: while it signs one and has the next ready,
 * what the event loop produces meanwhile waits and goes over as one batch when a batch is done. Every
 * message wakes a sleeping thread on the other side (a futex and a context switch each way); sending each
 * turn's inputs at once made a message of one to three tokens under load, and the wake-ups were about a
 * fifth of the signing thread's time in perf. Batches grow with the load instead of the messages. The
 * tokens come back every 8 signed, not at the end of a batch: a token of a large batch would otherwise
 * wait for the whole batch, and on an idle machine, where the rate follows each request's latency, that
 * cost a sixth of the tokens per second.
 *
 * The thread is started on first use and is unreferenced while nothing is in flight, so it never keeps a
 * process alive. If it dies, what was in flight is rejected and the next signature starts a new one.
 */
export interface SigningThread {
  /**
   * The compact JWS (RFC 7515 §7.1) of `payload`, a JSON text, under `header`, the base64url-encoded
   * protected header, signed ES256 (IEEE P1363) with `key`. The payload is encoded on the thread too.
   */
  signJws(header: string, payload: string, key: KeyObject): Promise<string>;
}

// Plain CommonJS, evaluated in the worker: it must run unchanged from sources, tests and the bundle.
export const SIGNING_THREAD_SOURCE = `
const { parentPort } = require('node:worker_threads');
const { sign } = require('node:crypto');
const ANSWER_CHUNK = 8;
const keys = new Map();
parentPort.on('message', (message) => {
  if (message.keyId !== undefined) {
    keys.set(message.keyId, message.key);
    return;
  }
  const { headers, payloads, keyIds } = message;
  let tokens = [];
  for (let i = 0; i < payloads.length; i++) {
    try {
      const key = keys.get(keyIds[i]);
      const input = headers[i] + '.' + Buffer.from(payloads[i], 'utf8').toString('base64url');
      tokens.push(input + '.' + sign('sha256', Buffer.from(input, 'latin1'), { key, dsaEncoding: 'ieee-p1363' })
        .toString('base64url'));
    } catch (error) {
      tokens.push({ error: String(error && error.message ? error.message : error) });
    }
    if (tokens.length === ANSWER_CHUNK && i < payloads.length - 1) {
      parentPort.postMessage({ tokens, last: false });
      tokens = [];
    }
  }
  parentPort.postMessage({ tokens, last: true });
});
`;

/** Inputs handed over in one message at most. */
export const MAX_BATCH = 64;
/** Batches with the thread at once: one being signed, the next ready. */
export const MAX_IN_FLIGHT = 2;

interface PendingSignature {
  header: string;
  payload: string;
  key: KeyObject;
  resolve: (signature: string) => void;
  reject: (error: Error) => void;
}

/** A signing thread, started on first use. `workerSource` is for tests that need a thread that misbehaves. */
export function createSigningThread(workerSource: string = SIGNING_THREAD_SOURCE): SigningThread {
  let worker: Worker | undefined;
  // Key ids are per worker: a new worker is sent each key again.
  let keyIds = new WeakMap<KeyObject, number>();
  let nextKeyId = 0;
  let queued: PendingSignature[] = [];
  let flushScheduled = false;
  // Signatures sent, answered in order (from `answered` on), and how many batches they make.
  let sent: PendingSignature[] = [];
  let answered = 0;
  let batchesInFlight = 0;

  const fail = (error: Error) => {
    const lost = sent.slice(answered);
    sent = [];
    answered = 0;
    batchesInFlight = 0;
    worker = undefined;
    keyIds = new WeakMap();
    for (const pending of lost) pending.reject(error);
    // Inputs still waiting for room go to the next thread.
    if (queued.length > 0) schedule();
  };

  const start = (): Worker => {
    // No inherited flags: the source is plain CommonJS (not under --input-type=module) and needs no loaders.
    const started = new Worker(workerSource, { eval: true, execArgv: [] });
    started.unref();
    started.on('message', ({ tokens, last }: { tokens: (string | { error: string })[]; last: boolean }) => {
      if (worker !== started) return;
      for (const token of tokens) {
        const pending = sent[answered++];
        if (!pending) break;
        if (typeof token === 'string') pending.resolve(token);
        else pending.reject(new Error(`ES256 signing failed: ${token.error}`));
      }
      if (answered === sent.length) {
        sent = [];
        answered = 0;
      } else if (answered > 1024 && answered * 2 > sent.length) {
        // Under steady load the list never empties: drop the answered front now and then.
        sent = sent.slice(answered);
        answered = 0;
      }
      if (!last) return;
      batchesInFlight--;
      if (queued.length > 0) flush();
      else if (batchesInFlight === 0) started.unref();
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
      target.postMessage({ keyId: id, key });
    }
    return id;
  };

  const flush = () => {
    flushScheduled = false;
    if (queued.length === 0 || batchesInFlight >= MAX_IN_FLIGHT) return;
    const batch = queued.length <= MAX_BATCH ? queued : queued.slice(0, MAX_BATCH);
    queued = queued.length <= MAX_BATCH ? [] : queued.slice(MAX_BATCH);
    worker ??= start();
    const target = worker;
    // Keys are sent to the thread before the first batch that uses them, once per thread.
    const batchKeyIds = batch.map((p) => keyIdOf(target, p.key));
    if (batchesInFlight === 0) target.ref();
    batchesInFlight++;
    for (const pending of batch) sent.push(pending);
    target.postMessage({
      headers: batch.map((p) => p.header),
      payloads: batch.map((p) => p.payload),
      keyIds: batchKeyIds,
    });
    if (queued.length > 0) flush();
  };

  /** Sends what one turn of the event loop queued at the end of the turn, unless the thread is full (then the next answer sends it). */
  const schedule = () => {
    if (flushScheduled || batchesInFlight >= MAX_IN_FLIGHT) return;
    flushScheduled = true;
    setImmediate(flush);
  };

  return {
    signJws(header, payload, key) {
      return new Promise<string>((resolve, reject) => {
        queued.push({ header, payload, key, resolve, reject });
        if (queued.length >= MAX_BATCH) flush();
        else schedule();
      });
    },
  };
}
