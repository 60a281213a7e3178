// A thread that works for a moment (so that a profile of it has samples), then says so.
import { parentPort } from 'node:worker_threads';

let sum = 0;
const until = performance.now() + 50;
while (performance.now() < until) for (let i = 0; i < 10_000; i++) sum += i % 7;
parentPort!.postMessage(sum);
