// The compaction thread's entry (compaction-thread.ts): background work, at the lowest priority there
// is (Linux) from its first instruction, so that loading its program (compaction-serve.ts: the storage
// layer, Kysely, the codec; seconds of CPU under tsx) already waits for a free core instead of taking
// one from the event loop and the historian thread.
import { lowerPriority } from '../../../../workers/thread-priority.js';

/** Background work: the lowest priority there is. */
const COMPACTION_NICENESS = 19;

lowerPriority(COMPACTION_NICENESS);
await import('./compaction-serve.js');
