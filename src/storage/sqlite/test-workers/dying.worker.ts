// A SQLite thread that says it is ready and exits (code 3) on its first message: for the tests of what
// a thread's death does to what was in flight.
import { parentPort } from 'node:worker_threads';

parentPort!.on('message', () => process.exit(3));
parentPort!.postMessage({ ready: true });
