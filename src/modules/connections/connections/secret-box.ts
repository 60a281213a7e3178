import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const VERSION = 'v1';

/**
 * Encrypts a connection's secret config fields with AES-256-GCM under the key-encryption key, bound
 * to the connection id (additional authenticated data), as `v1.<iv>.<tag>.<ciphertext>` (base64url).
 */
export function sealSecrets(secrets: Record<string, string>, connectionId: string, key: Buffer): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(connectionId, 'utf8'));
  const data = Buffer.concat([cipher.update(JSON.stringify(secrets), 'utf8'), cipher.final()]);
  return [VERSION, iv, cipher.getAuthTag(), data]
    .map((p) => (typeof p === 'string' ? p : p.toString('base64url')))
    .join('.');
}

/** Opens what sealSecrets produced for the connection; throws (without the content) on any mismatch. */
export function openSecrets(sealed: string, connectionId: string, key: Buffer): Record<string, string> {
  const [version, iv, tag, data] = sealed.split('.');
  if (version !== VERSION || !iv || !tag || !data) throw new Error('connection secrets: unknown format');
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'), {
      authTagLength: 16,
    });
    decipher.setAAD(Buffer.from(connectionId, 'utf8'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    const text = Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]).toString(
      'utf8',
    );
    return JSON.parse(text) as Record<string, string>;
  } catch {
    throw new Error('connection secrets could not be decrypted (was the key-encryption key changed?)');
  }
}
