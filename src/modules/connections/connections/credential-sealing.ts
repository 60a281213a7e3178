import type { Kysely } from 'kysely';
import type { Database } from '../../../storage/tables.js';
import { protocolOf } from '../protocols/protocol-registry.js';
import { plaintextCredentials } from './connection-secrets.js';
import { openSecrets, sealSecrets } from './secret-box.js';

/**
 * Seals what earlier versions stored in a connection's config in plain text: REST header values and
 * the credentials of a URL (`user:password@` in a REST `baseUrl`, an MQTT `url`, an OPC UA
 * `endpointUrl`), the user moved to `username`. Run when the server starts, before any session opens:
 * sealing needs the key-encryption key, which only the running server holds (migration 0024 redacts
 * the versions, the audit log and the bundles, which need no key). Idempotent, and safe on replicas
 * starting together: a row changed meanwhile is left to the next start. Answers how many it sealed.
 */
export async function sealPlaintextCredentials(
  db: Kysely<Database>,
  keyEncryptionKey: Buffer,
): Promise<number> {
  const rows = await db
    .selectFrom('connections')
    .select(['id', 'protocol', 'config', 'secrets'])
    .where((eb) => eb.or([eb('config', 'like', '%"headers"%'), eb('config', 'like', '%://%@%')]))
    .execute();
  let sealed = 0;
  for (const row of rows) {
    let found: ReturnType<typeof plaintextCredentials>;
    try {
      protocolOf(row.protocol);
      found = plaintextCredentials(row.protocol, JSON.parse(row.config) as Record<string, unknown>);
    } catch {
      continue;
    }
    if (!found) continue;
    const secrets = {
      ...(row.secrets ? openSecrets(row.secrets, row.id, keyEncryptionKey) : {}),
      ...found.secrets,
    };
    const result = await db
      .updateTable('connections')
      .set({
        config: JSON.stringify(found.config),
        secrets: Object.keys(secrets).length === 0 ? null : sealSecrets(secrets, row.id, keyEncryptionKey),
      })
      .where('id', '=', row.id)
      .where('config', '=', row.config)
      .executeTakeFirst();
    sealed += Number(result.numUpdatedRows);
  }
  return sealed;
}
