import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const VERSION = 'v1';

export class SecretDecryptionError extends Error {
  override readonly name = 'SecretDecryptionError';
}

/**
 * Encrypts a configuration secret with AES-256-GCM under the 32-byte key-encryption key
 * (`platform/secrets/key-encryption-key.ts`, MERIDIAN_KEY_ENCRYPTION_KEY), bound to `purpose` (additional
 * authenticated data), so that a ciphertext cannot be moved to another field. Returns
 * `v1.<iv>.<tag>.<ciphertext>`, each part base64url.
 */
export function sealSecret(plaintext: string, purpose: string, key: Buffer): string {
  if (key.length !== 32) throw new TypeError('the key-encryption key must be 32 bytes');
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(purpose, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return [
    VERSION,
    iv.toString('base64url'),
    cipher.getAuthTag().toString('base64url'),
    ciphertext.toString('base64url'),
  ].join('.');
}

/** Opens what sealSecret produced for `purpose`; throws SecretDecryptionError on any mismatch. */
export function openSecret(sealed: string, purpose: string, key: Buffer): string {
  const [version, ivText, tagText, ciphertextText, ...rest] = sealed.split('.');
  if (version !== VERSION || !ivText || !tagText || ciphertextText === undefined || rest.length > 0) {
    throw new SecretDecryptionError(`${purpose} could not be decrypted: unknown format`);
  }
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(ivText, 'base64url'), {
      authTagLength: 16,
    });
    decipher.setAAD(Buffer.from(purpose, 'utf8'));
    decipher.setAuthTag(Buffer.from(tagText, 'base64url'));
    return Buffer.concat([
      decipher.update(Buffer.from(ciphertextText, 'base64url')),
      decipher.final(),
    ]).toString('utf8');
  } catch {
    throw new SecretDecryptionError(
      `${purpose} could not be decrypted: wrong MERIDIAN_KEY_ENCRYPTION_KEY or altered data`,
    );
  }
}
