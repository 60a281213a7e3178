// The signing thread, but one that exits (code 3) instead of answering a batch that signed the payload
// "die": for signing-thread.test.ts. The program is signing.worker.ts itself; its answers pass here.
import { parentPort } from 'node:worker_threads';
import '../signing.worker.js';
import type { SignedToken } from '../signing.worker.js';

const port = parentPort!;
const die = Buffer.from('"die"').toString('base64url');
const answer = port.postMessage.bind(port);
port.postMessage = (tokens: SignedToken[]) => {
  if (tokens.some((token) => typeof token === 'string' && token.split('.')[1] === die)) process.exit(3);
  answer(tokens);
};
