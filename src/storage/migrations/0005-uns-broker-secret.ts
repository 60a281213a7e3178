import type { MeridianMigration } from '../migrator.js';

/**
 * The external broker's password leaves `uns_settings.mqtt_url` for a column of its own, encrypted with
 * the key-encryption key. The service moves a password still inside a stored URL at its next start
 * (the key is not available to migrations).
 */
export const unsBrokerSecret: MeridianMigration = {
  name: '0005-uns-broker-secret',
  async up(db) {
    await db.schema.alterTable('uns_settings').addColumn('mqtt_password_encrypted', 'text').execute();
  },
};
