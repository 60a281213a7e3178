import { setFlagsFromString } from 'node:v8';

/**
 * V8 flags the server sets on itself when it starts.
 *
 * `--no-allocation-site-pretenuring`: V8 watches how many objects of each allocation site survive a
 * young-generation collection, and once a site's survival rate is high it allocates that site's objects
 * directly in the old generation. Under a steady load of publishes, the objects of requests in flight
 * (waiting for their group commit) made the request path's sites look long-lived. Their objects then
 * went straight to the old generation, which grew by about 2 MB per young collection until a full
 * collection found them dead, and each young collection took 7-11 ms instead of about 1.5 ms (it scans
 * the old objects pointing at young ones). Whether it happened varied from run to run. Single HTTP
 * publishes on SQLite, alternating runs on two cores: without pretenuring, 12,160 publishes/s on
 * average over five runs, and young collections took 76-105 ms of every 4 s; with it, 10,008/s, and
 * 470-490 ms in four of the five runs.
 */
export const SERVER_V8_FLAGS = '--no-allocation-site-pretenuring';

/** Applies SERVER_V8_FLAGS to this process; V8 reads this flag as it collects, so it applies at once. */
export function tuneGarbageCollector(): void {
  setFlagsFromString(SERVER_V8_FLAGS);
}
