import type { Kysely } from 'kysely';
import type { Database } from './tables.js';

/**
 * Storage.durableWrite: runs a write (usually one transaction) and resolves once it is durable, without
 * a disk flush on the event loop. Background jobs' bookkeeping writes take one, so that on SQLite their
 * commits do not hold every request for an fsync (`synchronous = FULL`).
 */
export type DurableWrite = <T>(work: (db: Kysely<Database>) => Promise<T>) => Promise<T>;

/** A write run as it is: on SQLite the event loop's connection flushes the disk in the commit. */
export function directWrite(db: Kysely<Database>): DurableWrite {
  return (work) => work(db);
}
