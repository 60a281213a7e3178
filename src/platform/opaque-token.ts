import * as crypto from 'node:crypto';
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Fixed prefixes of every opaque secret Meridian issues. A prefix tells a reader (and a secret scanner)
 * what leaked; the trailing checksum lets us refuse a mistyped or forged value without a database read.
 */
export const TOKEN_PREFIX = {
  session: 'mrd_ses_',
  personalAccessToken: 'mrd_pat_',
  refreshToken: 'mrd_rt_',
  authorizationCode: 'mrd_ac_',
  clientSecret: 'mrd_cs_',
  clientId: 'mrd_ci_',
} as const;

export type TokenPrefix = (typeof TOKEN_PREFIX)[keyof typeof TOKEN_PREFIX];

export interface IssuedOpaqueToken {
  /** The value handed to the holder once; never stored. */
  value: string;
  /** What storage keeps: `hashOpaqueToken(value)`. */
  hash: string;
}

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const RANDOM_LENGTH = 40; // 40 base62 characters carry about 238 bits of entropy
const CHECKSUM_LENGTH = 6;

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

function crc32(text: string): number {
  let crc = 0xffffffff;
  for (let i = 0; i < text.length; i++) crc = CRC_TABLE[(crc ^ text.charCodeAt(i)) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

function toBase62(value: number, width: number): string {
  let out = '';
  let rest = value;
  for (let i = 0; i < width; i++) {
    out = BASE62[rest % 62] + out;
    rest = Math.floor(rest / 62);
  }
  return out;
}

function randomBase62(length: number): string {
  // Rejection sampling keeps every character uniform (256 is not a multiple of 62).
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248 && out.length < length) out += BASE62[byte % 62];
    }
  }
  return out;
}

/** Creates a new opaque secret: prefix, 40 random base62 characters, a 6-character CRC32 checksum. */
export function generateOpaqueToken(prefix: TokenPrefix): IssuedOpaqueToken {
  const body = randomBase62(RANDOM_LENGTH);
  const value = `${prefix}${body}${toBase62(crc32(prefix + body), CHECKSUM_LENGTH)}`;
  return { value, hash: hashOpaqueToken(value) };
}

/** Creates a random public identifier with a prefix and no checksum (client IDs). */
export function generateIdentifier(prefix: TokenPrefix, length = 24): string {
  return prefix + randomBase62(length);
}

/** SHA-256 of the full value, base64url: the only form in which a secret is stored. */
export function hashOpaqueToken(value: string): string {
  return sha256Base64url(value);
}

// `crypto.hash` (Node 20.12+) hashes in one call, without a Hash object per value: a client's secret is
// hashed on every token request. Older Node 20 releases fall back to createHash.
const oneShotHash = (crypto as { hash?: (algorithm: string, data: string, encoding: 'base64url') => string })
  .hash;
const sha256Base64url: (value: string) => string = oneShotHash
  ? (value) => oneShotHash('sha256', value, 'base64url')
  : (value) => createHash('sha256').update(value).digest('base64url');

/** True when `value` has the given prefix, the right length and a matching checksum. */
export function isWellFormedOpaqueToken(value: string, prefix: TokenPrefix): boolean {
  if (!value.startsWith(prefix) || value.length !== prefix.length + RANDOM_LENGTH + CHECKSUM_LENGTH)
    return false;
  const body = value.slice(prefix.length, prefix.length + RANDOM_LENGTH);
  const checksum = value.slice(prefix.length + RANDOM_LENGTH);
  for (const ch of body) if (!BASE62.includes(ch)) return false;
  return toBase62(crc32(prefix + body), CHECKSUM_LENGTH) === checksum;
}

/** Compares two strings in time that depends only on their lengths. */
export function timingSafeEqualString(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  if (left.length !== right.length) {
    timingSafeEqual(left, left);
    return false;
  }
  return timingSafeEqual(left, right);
}
