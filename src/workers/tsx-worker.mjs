// A worker thread's entry when Meridian runs from its TypeScript sources under tsx (worker-module.ts):
// registers tsx in this thread, then loads the worker's program, whose URL is the first argument.
// Plain JavaScript, as nothing can load TypeScript before it has run.
import { argv } from 'node:process';
import { register } from 'tsx/esm/api';

register();
await import(argv[2]);
