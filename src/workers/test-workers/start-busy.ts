// Run as a process (worker-module.test.ts): starts the busy thread through startWorker, waits for its
// answer, stops it, and exits.
import { startWorker } from '../worker-module.js';

const worker = startWorker({ name: 'busy', from: import.meta.url });
await new Promise((resolve) => worker.once('message', resolve));
await worker.terminate();
