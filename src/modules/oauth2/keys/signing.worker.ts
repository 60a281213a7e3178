// The signing thread (signing-thread.ts): keys arrive once each (`{ keyId, key }`), then batches of
// signing inputs; a batch's tokens (or errors) go back in one message, in the order of its inputs.
import { type KeyObject, sign } from 'node:crypto';
import { parentPort, workerData } from 'node:worker_threads';
import { runAsBatchThread } from '../../../workers/thread-priority.js';

/** A batch: the protected headers (base64url), the payloads (JSON text) and the id of each one's key. */
export interface SigningBatch {
  headers: string[];
  payloads: string[];
  keyIds: number[];
}
export type SigningMessage = SigningBatch | { keyId: number; key: KeyObject };
/** A token, or why it could not be made. */
export type SignedToken = string | { error: string };

/** What the starter gives the thread (signing-thread.ts). */
export interface SigningThreadData {
  /** Steps below the event loop's priority the thread runs at where it cannot be a batch thread. */
  fallbackNiceness: number;
}

runAsBatchThread((workerData as SigningThreadData | undefined)?.fallbackNiceness ?? 0);
const port = parentPort!;
const keys = new Map<number, KeyObject>();
port.on('message', (message: SigningMessage) => {
  if ('key' in message) {
    keys.set(message.keyId, message.key);
    return;
  }
  const { headers, payloads, keyIds } = message;
  const tokens = new Array<SignedToken>(payloads.length);
  for (let i = 0; i < payloads.length; i++) {
    try {
      const key = keys.get(keyIds[i]!)!;
      const input = `${headers[i]}.${Buffer.from(payloads[i]!, 'utf8').toString('base64url')}`;
      const signature = sign('sha256', Buffer.from(input, 'latin1'), { key, dsaEncoding: 'ieee-p1363' });
      tokens[i] = `${input}.${signature.toString('base64url')}`;
    } catch (error) {
      tokens[i] = { error: String((error as Error | undefined)?.message ?? error) };
    }
  }
  port.postMessage(tokens);
});
