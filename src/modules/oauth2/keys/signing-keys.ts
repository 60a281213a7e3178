import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { CryptoKey, JWK } from 'jose';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK } from 'jose';

/** Algorithms Meridian signs with: ES256 for access tokens, RS256 for ID tokens. */
export const SIGNING_ALGORITHMS = ['ES256', 'RS256'] as const;
export type SigningAlgorithm = (typeof SIGNING_ALGORITHMS)[number];

/** A freshly generated signing key, as storage keeps it (the private JWK encrypted). */
export interface SigningKeyMaterial {
  kid: string;
  alg: SigningAlgorithm;
  publicJwk: JWK;
  privateJwk: JWK;
}

/** A key handed to the ring: the public JWK always, the private one when it signs. */
export interface RingKeyInput {
  kid: string;
  alg: SigningAlgorithm;
  publicJwk: JWK;
  privateJwk?: JWK | undefined;
}

/** A key imported once, ready for jose. */
export interface ImportedKey {
  kid: string;
  alg: SigningAlgorithm;
  key: CryptoKey;
}

/** The JWK Set document served at /.well-known/jwks.json (RFC 7517 §5). */
export interface Jwks {
  keys: JWK[];
}

/** Thrown when an encrypted private key cannot be opened: wrong key encryption key or altered data. */
export class PrivateKeyDecryptionError extends Error {
  constructor(message = 'signing key could not be decrypted: wrong key encryption key or corrupted data') {
    super(message);
    this.name = 'PrivateKeyDecryptionError';
  }
}

const PUBLIC_MEMBERS: Record<SigningAlgorithm, readonly string[]> = {
  ES256: ['kty', 'crv', 'x', 'y'],
  RS256: ['kty', 'n', 'e'],
};
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k', 'priv'] as const;
const ENCRYPTION_VERSION = 'v1';

/** Generates a key pair for `alg`; `kid` is its RFC 7638 JWK thumbprint. */
export async function generateSigningKey(alg: SigningAlgorithm): Promise<SigningKeyMaterial> {
  assertAlgorithm(alg);
  const { publicKey, privateKey } = await generateKeyPair(alg, { extractable: true });
  const publicParts = pickPublic(await exportJWK(publicKey), alg);
  const kid = await calculateJwkThumbprint(publicParts);
  const privateJwk: JWK = { ...(await exportJWK(privateKey)), kid, alg, use: 'sig' };
  delete privateJwk.ext;
  delete privateJwk.key_ops;
  return { kid, alg, publicJwk: { ...publicParts, kid, alg, use: 'sig' }, privateJwk };
}

/**
 * Encrypts a private JWK with AES-256-GCM under a 32-byte key encryption key, binding it to its kid
 * (additional authenticated data). Returns `v1.<iv>.<tag>.<ciphertext>`, each part base64url.
 */
export function encryptPrivateKey(privateJwk: JWK, keyEncryptionKey: Buffer): string {
  assertKeyEncryptionKey(keyEncryptionKey);
  const kid = privateJwk.kid;
  if (typeof kid !== 'string' || kid === '') throw new TypeError('the private JWK must carry its kid');
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', keyEncryptionKey, iv);
  cipher.setAAD(Buffer.from(kid, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(JSON.stringify(privateJwk), 'utf8'), cipher.final()]);
  const tag = cipher.getAuthTag();
  return [ENCRYPTION_VERSION, iv, tag, ciphertext]
    .map((part) => (typeof part === 'string' ? part : part.toString('base64url')))
    .join('.');
}

/** Opens what encryptPrivateKey produced for `kid`; throws PrivateKeyDecryptionError on any mismatch. */
export function decryptPrivateKey(encrypted: string, kid: string, keyEncryptionKey: Buffer): JWK {
  assertKeyEncryptionKey(keyEncryptionKey);
  const parts = typeof encrypted === 'string' ? encrypted.split('.') : [];
  const [version, ivText, tagText, ciphertextText] = parts;
  if (parts.length !== 4 || version !== ENCRYPTION_VERSION || !ivText || !tagText || !ciphertextText) {
    throw new PrivateKeyDecryptionError('signing key could not be decrypted: unknown format');
  }
  const iv = Buffer.from(ivText, 'base64url');
  const tag = Buffer.from(tagText, 'base64url');
  if (iv.length !== 12 || tag.length !== 16) {
    throw new PrivateKeyDecryptionError('signing key could not be decrypted: unknown format');
  }
  let plaintext: string;
  try {
    const decipher = createDecipheriv('aes-256-gcm', keyEncryptionKey, iv, { authTagLength: 16 });
    decipher.setAAD(Buffer.from(kid, 'utf8'));
    decipher.setAuthTag(tag);
    plaintext = Buffer.concat([
      decipher.update(Buffer.from(ciphertextText, 'base64url')),
      decipher.final(),
    ]).toString('utf8');
  } catch {
    throw new PrivateKeyDecryptionError();
  }
  return JSON.parse(plaintext) as JWK;
}

/** Builds a JWK Set from public JWKs; refuses any JWK that carries private key material. */
export function buildJwks(publicJwks: readonly JWK[]): Jwks {
  const keys: JWK[] = [];
  const seen = new Set<string>();
  for (const jwk of publicJwks) {
    assertPublicOnly(jwk);
    if (jwk.kid !== undefined) {
      if (seen.has(jwk.kid)) continue;
      seen.add(jwk.kid);
    }
    keys.push({ ...jwk });
  }
  return { keys };
}

/**
 * The keys a process signs and verifies with: one active key per algorithm plus retiring keys that
 * only verify. Every key is imported once, in `create`, never per signature.
 */
export class SigningKeyRing {
  readonly #signing: Map<SigningAlgorithm, ImportedKey>;
  readonly #verification: Map<string, ImportedKey>;
  readonly #jwks: Jwks;

  private constructor(
    signing: Map<SigningAlgorithm, ImportedKey>,
    verification: Map<string, ImportedKey>,
    jwks: Jwks,
  ) {
    this.#signing = signing;
    this.#verification = verification;
    this.#jwks = jwks;
  }

  /**
   * Checks and imports the keys. Active keys need their private JWK and at most one per algorithm;
   * retiring keys are used for verification only (a private part, if given, is ignored).
   */
  static async create(input: {
    active: readonly RingKeyInput[];
    retiring?: readonly RingKeyInput[] | undefined;
  }): Promise<SigningKeyRing> {
    const signing = new Map<SigningAlgorithm, ImportedKey>();
    const verification = new Map<string, ImportedKey>();
    const publicJwks: JWK[] = [];
    const all = [
      ...input.active.map((k) => ({ ...k, active: true })),
      ...(input.retiring ?? []).map((k) => ({ ...k, active: false })),
    ];
    for (const entry of all) {
      const publicJwk = await checkRingKey(entry);
      if (verification.has(entry.kid)) throw new Error(`signing key ${entry.kid} is given twice`);
      verification.set(entry.kid, {
        kid: entry.kid,
        alg: entry.alg,
        key: await importAsymmetric(publicJwk, entry.alg),
      });
      publicJwks.push(publicJwk);
      if (!entry.active) continue;
      if (signing.has(entry.alg)) throw new Error(`more than one active ${entry.alg} signing key`);
      if (entry.privateJwk === undefined) {
        throw new Error(`active signing key ${entry.kid} has no private key`);
      }
      assertSameKey(entry.privateJwk, publicJwk, entry.alg, entry.kid);
      const privateKey = await importAsymmetric({ ...entry.privateJwk, ext: false }, entry.alg);
      signing.set(entry.alg, { kid: entry.kid, alg: entry.alg, key: privateKey });
    }
    return new SigningKeyRing(signing, verification, deepFreeze(buildJwks(publicJwks)));
  }

  /** The active key that signs with `alg`; throws when the ring has none. */
  getSigningKey(alg: SigningAlgorithm): ImportedKey {
    const key = this.#signing.get(alg);
    if (key === undefined) throw new Error(`no active ${alg} signing key`);
    return key;
  }

  /** The public key for `kid` (active or retiring), or undefined when the ring does not know it. */
  getVerificationKey(kid: string): ImportedKey | undefined {
    return this.#verification.get(kid);
  }

  /** The public JWK Set of every active and retiring key (frozen; built once). */
  jwks(): Jwks {
    return this.#jwks;
  }
}

async function checkRingKey(entry: RingKeyInput): Promise<JWK> {
  assertAlgorithm(entry.alg);
  assertPublicOnly(entry.publicJwk);
  const expectedKty = entry.alg === 'ES256' ? 'EC' : 'RSA';
  if (entry.publicJwk.kty !== expectedKty || (entry.alg === 'ES256' && entry.publicJwk.crv !== 'P-256')) {
    throw new Error(`signing key ${entry.kid} is not a key for ${entry.alg}`);
  }
  const publicParts = pickPublic(entry.publicJwk, entry.alg);
  // The kid is the RFC 7638 thumbprint, so a row whose key and kid disagree is refused at start.
  if ((await calculateJwkThumbprint(publicParts)) !== entry.kid) {
    throw new Error(`signing key ${entry.kid}: kid is not the JWK thumbprint of its public key`);
  }
  return { ...publicParts, kid: entry.kid, alg: entry.alg, use: 'sig' };
}

async function importAsymmetric(jwk: JWK, alg: SigningAlgorithm): Promise<CryptoKey> {
  const key = await importJWK(jwk, alg);
  if (key instanceof Uint8Array) throw new Error('a signing key must be asymmetric');
  return key;
}

function assertSameKey(privateJwk: JWK, publicJwk: JWK, alg: SigningAlgorithm, kid: string): void {
  if (privateJwk.kid !== undefined && privateJwk.kid !== kid) {
    throw new Error(`signing key ${kid}: private key carries another kid`);
  }
  for (const member of PUBLIC_MEMBERS[alg]) {
    if (privateJwk[member as keyof JWK] !== publicJwk[member as keyof JWK]) {
      throw new Error(`signing key ${kid}: private key does not belong to the public key`);
    }
  }
}

function pickPublic(jwk: JWK, alg: SigningAlgorithm): JWK {
  const out: Record<string, unknown> = {};
  for (const member of PUBLIC_MEMBERS[alg]) {
    const value = jwk[member as keyof JWK];
    if (typeof value !== 'string') throw new Error(`JWK is missing its ${member} member`);
    out[member] = value;
  }
  return out as JWK;
}

function assertPublicOnly(jwk: JWK): void {
  for (const member of PRIVATE_MEMBERS) {
    if (jwk[member] !== undefined) {
      throw new Error(`refusing private key material in a public JWK (${member})`);
    }
  }
}

function assertAlgorithm(alg: string): asserts alg is SigningAlgorithm {
  if (!SIGNING_ALGORITHMS.includes(alg as SigningAlgorithm)) {
    throw new Error(`unsupported signing algorithm ${alg}`);
  }
}

function assertKeyEncryptionKey(key: Buffer): void {
  if (!Buffer.isBuffer(key) || key.length !== 32) {
    throw new TypeError('the key encryption key must be 32 bytes');
  }
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}
