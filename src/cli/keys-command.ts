import type { Config } from '../config/config.schema.js';
import { SigningKeyStore } from '../modules/oauth2/keys/signing-key-store.js';
import { resolveKeyEncryptionKey } from '../platform/secrets/key-encryption-key.js';
import { openStorage } from '../storage/database.js';
import { migrateToLatest } from '../storage/migrator.js';

/**
 * `meridian keys rotate`: new ES256 and RS256 keys become active; the current ones retire (still served
 * in the JWKS until every token they signed has expired). Running servers pick up the change within seconds.
 */
export async function rotateSigningKeys(
  config: Config,
  print: (line: string) => void = console.log,
): Promise<number> {
  const storage = openStorage({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  try {
    await migrateToLatest(storage);
    const store = new SigningKeyStore({
      db: storage.db,
      keyEncryptionKey: resolveKeyEncryptionKey(config),
      now: () => Date.now(),
      retireAfterMs: Math.max(config.accessTokenTtl, config.idTokenTtl) * 1000 + 60_000,
    });
    const kids = await store.rotate();
    // Refuse to leave a ring that cannot be built (e.g. a wrong key encryption key).
    await store.loadRing();
    print(`new active signing keys: ${kids.join(', ')}`);
    print('previous keys are retiring: they verify tokens until those expire, then they are removed');
    return 0;
  } finally {
    await storage.close();
  }
}
