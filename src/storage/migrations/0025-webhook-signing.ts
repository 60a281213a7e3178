import type { MeridianMigration } from '../migrator.js';

/**
 * Signed webhook calls (modules/engine/triggers/webhook-signing.ts): a pipeline's signing secret, sealed
 * with the key-encryption key (an HMAC needs the secret itself), and the signatures accepted within the
 * time window, as their SHA-256, so that a captured call is refused when sent again, on any replica.
 */
export const webhookSigning: MeridianMigration = {
  name: '0025-webhook-signing',
  async up(db) {
    await db.schema
      .createTable('engine_webhook_signing')
      .addColumn('pipeline_id', 'text', (c) => c.primaryKey().references('pipelines.id').onDelete('cascade'))
      .addColumn('organization_id', 'text', (c) =>
        c.notNull().references('organizations.id').onDelete('cascade'),
      )
      .addColumn('secret_sealed', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('created_by', 'text')
      .execute();
    await db.schema
      .createTable('engine_webhook_replays')
      .addColumn('pipeline_id', 'text', (c) => c.notNull().references('pipelines.id').onDelete('cascade'))
      .addColumn('signature_hash', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('engine_webhook_replays_pk', ['pipeline_id', 'signature_hash'])
      .execute();
  },
};
