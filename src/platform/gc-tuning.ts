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

/**
 * Flags the server's Node.js process must be started with (V8 sizes its heap when the process starts):
 * `bin/meridian.js` carries them on its `#!` line and `npm start` passes them; a test holds both to this
 * list. Anyone starting `node bin/meridian.js` by hand passes them too, or sets NODE_OPTIONS.
 *
 * `--max-semi-space-size=64`: young-generation semi-spaces of up to 64 MiB instead of 16. Values
 * waiting for their group commit live a few milliseconds; with small semi-spaces a scavenge comes every
 * few thousand messages and copies them, and those caught twice are promoted to the old generation to
 * die there. Four times fewer scavenges copy far fewer of them: the embedded broker's CPU per
 * historized QoS 0 message was 8.0-9.7 µs against 8.8-9.9 µs at the default, three alternating runs.
 * It costs up to about 100 MiB more memory under load.
 */
export const SERVER_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=64'];

/** True when this process was started with every SERVER_NODE_FLAGS (on its command line or in NODE_OPTIONS). */
export function hasServerNodeFlags(): boolean {
  const given = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)];
  return SERVER_NODE_FLAGS.every((flag) => given.includes(flag));
}

/** Applies SERVER_V8_FLAGS to this process; V8 reads this flag as it collects, so it applies at once. */
export function tuneGarbageCollector(): void {
  setFlagsFromString(SERVER_V8_FLAGS);
}
