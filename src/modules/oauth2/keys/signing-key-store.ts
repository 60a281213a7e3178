import type { Kysely } from 'kysely';
import type { Database } from '../../../storage/tables.js';
import { recordAudit } from '../../audit/audit.repository.js';
import {
  decryptPrivateKey,
  encryptPrivateKey,
  generateSigningKey,
  type RingKeyInput,
  SIGNING_ALGORITHMS,
  type SigningAlgorithm,
  SigningKeyRing,
} from './signing-keys.js';

/** Signing keys in the database: load or create the active ones, rotate, build the ring. */
export class SigningKeyStore {
  constructor(
    private readonly deps: {
      db: Kysely<Database>;
      keyEncryptionKey: Buffer;
      now: () => number;
      /** How long a retiring key stays in the JWKS: the longest lifetime of a token it signed (ms). */
      retireAfterMs: number;
    },
  ) {}

  /** Creates an active key for every algorithm that has none (a concurrent creator wins the race). */
  async ensureActiveKeys(): Promise<void> {
    for (const alg of SIGNING_ALGORITHMS) {
      const existing = await this.deps.db
        .selectFrom('oauth2_signing_keys')
        .select('kid')
        .where('alg', '=', alg)
        .where('status', '=', 'active')
        .executeTakeFirst();
      if (existing) continue;
      try {
        await this.insertActive(alg);
      } catch {
        // The partial unique index refused a second active key: another replica made it first.
      }
    }
  }

  /** Makes new keys active and the current ones retiring (they stay in the JWKS until their tokens expire). */
  async rotate(): Promise<string[]> {
    const now = this.deps.now();
    const created: string[] = [];
    await this.deps.db.transaction().execute(async (trx) => {
      const retiring = await trx
        .selectFrom('oauth2_signing_keys')
        .select('kid')
        .where('status', '=', 'active')
        .execute();
      await trx
        .updateTable('oauth2_signing_keys')
        .set({ status: 'retiring', retired_at: now })
        .where('status', '=', 'active')
        .execute();
      for (const alg of SIGNING_ALGORITHMS) created.push(await this.insertActive(alg, trx));
      // In the same transaction: a rotation is never without its audit row (key ids only, never key material).
      await recordAudit(trx, now, {
        actorUserId: null,
        action: 'oauth2_signing_keys.rotated',
        targetType: 'oauth2_signing_key',
        targetId: created.join(' '),
        details: { active: created, retiring: retiring.map((r) => r.kid) },
      });
    });
    await this.pruneRetired();
    return created;
  }

  /** Deletes retiring keys whose tokens have all expired. */
  async pruneRetired(): Promise<void> {
    await this.deps.db
      .deleteFrom('oauth2_signing_keys')
      .where('status', '=', 'retiring')
      .where('retired_at', '<', this.deps.now() - this.deps.retireAfterMs)
      .execute();
  }

  /** A fingerprint of the key table; when it changes, the ring must be rebuilt. */
  async version(): Promise<string> {
    const rows = await this.deps.db
      .selectFrom('oauth2_signing_keys')
      .select(['kid', 'status'])
      .orderBy('kid')
      .execute();
    return rows.map((r) => `${r.kid}:${r.status}`).join(',');
  }

  /** Builds the ring from the active and still-valid retiring keys, decrypting each private key once. */
  async loadRing(): Promise<SigningKeyRing> {
    const cutoff = this.deps.now() - this.deps.retireAfterMs;
    const rows = await this.deps.db.selectFrom('oauth2_signing_keys').selectAll().execute();
    const active: RingKeyInput[] = [];
    const retiring: RingKeyInput[] = [];
    for (const row of rows) {
      const base = { kid: row.kid, alg: row.alg, publicJwk: JSON.parse(row.public_jwk) };
      if (row.status === 'active') {
        active.push({
          ...base,
          privateJwk: decryptPrivateKey(row.private_jwk_encrypted, row.kid, this.deps.keyEncryptionKey),
        });
      } else if ((row.retired_at ?? 0) >= cutoff) retiring.push(base);
    }
    return SigningKeyRing.create({ active, retiring });
  }

  private async insertActive(alg: SigningAlgorithm, db: Kysely<Database> = this.deps.db): Promise<string> {
    const key = await generateSigningKey(alg);
    await db
      .insertInto('oauth2_signing_keys')
      .values({
        kid: key.kid,
        alg,
        public_jwk: JSON.stringify(key.publicJwk),
        private_jwk_encrypted: encryptPrivateKey(key.privateJwk, this.deps.keyEncryptionKey),
        status: 'active',
        created_at: this.deps.now(),
        retired_at: null,
      })
      .execute();
    return key.kid;
  }
}
