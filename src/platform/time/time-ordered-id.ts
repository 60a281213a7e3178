import { randomFillSync } from 'node:crypto';

/**
 * An RFC 9562 UUIDv7 for `unixMs`: the 48-bit millisecond timestamp, version 7, the RFC 4122 variant
 * and 74 random bits. The random bits come from a pool of CSPRNG bytes refilled every 400 ids, written
 * out as hex in one go: `randomUUID()` (used before) builds its text from 20 concatenated pieces, and
 * made half the young-generation garbage of this function (a pipeline execution makes one id for itself
 * and one per node run); the uuid package's v7 read 16 fresh bytes from the CSPRNG per id, which was 2%
 * of the token endpoint's event loop. Ids made within one millisecond are unordered among themselves
 * (they still land on the same last page of an index).
 */
export function timeOrderedId(unixMs: number): string {
  const ms = Math.trunc(unixMs);
  // A batch holds many ids of the same millisecond; its hex form is made once.
  if (ms !== lastMs) {
    const time = ms.toString(16).padStart(12, '0');
    lastMs = ms;
    lastPrefix = `${time.slice(0, 8)}-${time.slice(8, 12)}-7`;
  }
  if (offset === POOL_BYTES) {
    randomFillSync(pool);
    offset = 0;
  }
  // 20 hex digits (80 random bits): 3 after the version, 1 whose low 2 bits go under the variant, 15 more.
  const hex = pool.toString('hex', offset, offset + ID_BYTES);
  offset += ID_BYTES;
  return `${lastPrefix}${hex.slice(0, 3)}-${VARIANT[hex[3]!]}${hex.slice(4, 7)}-${hex.slice(7, 19)}`;
}

const ID_BYTES = 10;
const POOL_BYTES = 400 * ID_BYTES;
const pool = Buffer.alloc(POOL_BYTES);
let offset = POOL_BYTES;
let lastMs = Number.NaN;
let lastPrefix = '';

/** A hex digit's low 2 bits under the RFC 4122 variant (binary 10xx). */
const VARIANT: Record<string, string> = Object.fromEntries(
  [...'0123456789abcdef'].map((digit) => [digit, '89ab'[Number.parseInt(digit, 16) & 3]!]),
);
