import { randomUUID } from 'node:crypto';

/**
 * An RFC 9562 UUIDv7 for `unixMs`: the 48-bit millisecond timestamp, version 7, the RFC 4122 variant
 * and 74 random bits taken from `randomUUID()`, whose bits after its own version nibble are random but
 * for the variant, which stays where v7 wants it. Node's randomUUID draws from a cached batch of entropy;
 * the uuid package's v7 read 16 fresh bytes from the CSPRNG per id, which was 2% of the token endpoint's
 * event loop. Ids made within one millisecond are unordered among themselves (they still land on the
 * same last page of an index).
 */
export function timeOrderedId(unixMs: number): string {
  const ms = Math.trunc(unixMs);
  // A batch holds many ids of the same millisecond; its hex form is made once.
  if (ms !== lastMs) {
    const time = ms.toString(16).padStart(12, '0');
    lastMs = ms;
    lastPrefix = `${time.slice(0, 8)}-${time.slice(8, 12)}-7`;
  }
  // randomUUID(): xxxxxxxx-xxxx-4xxx-Vxxx-xxxxxxxxxxxx; keep everything after the version nibble.
  return lastPrefix + randomUUID().slice(15);
}

let lastMs = Number.NaN;
let lastPrefix = '';
