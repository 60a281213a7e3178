import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensurePrivateDirectory, PRIVATE_FILE_MODE } from '../../storage/private-files.js';

/** Name of the key file made in the data directory when MERIDIAN_KEY_ENCRYPTION_KEY is unset. */
export const KEY_FILE_NAME = 'signing-key-encryption.key';

/**
 * The 32-byte key that encrypts signing keys at rest: SHA-256 of the configured secret, or of the key
 * file in the data directory, created (mode 0600) on first start.
 */
export function resolveKeyEncryptionKey(config: {
  keyEncryptionKey?: string | undefined;
  dataDir: string;
}): Buffer {
  if (config.keyEncryptionKey) return createHash('sha256').update(config.keyEncryptionKey, 'utf8').digest();
  ensurePrivateDirectory(config.dataDir);
  const path = join(config.dataDir, KEY_FILE_NAME);
  try {
    // 'wx' fails when the file exists, so two processes starting together cannot overwrite each other.
    writeFileSync(path, `${randomBytes(32).toString('base64url')}\n`, {
      flag: 'wx',
      mode: PRIVATE_FILE_MODE,
    });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  // The mode of 'wx' passes through the umask, and a file an older version wrote may be wider.
  chmodSync(path, PRIVATE_FILE_MODE);
  const secret = readFileSync(path, 'utf8').trim();
  if (secret.length < 32)
    throw new Error(`key file ${path} is too short; it must hold at least 32 characters`);
  return createHash('sha256').update(secret, 'utf8').digest();
}
