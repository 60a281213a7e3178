import type { Kysely } from 'kysely';
import type { Database } from '../../../storage/tables.js';

/**
 * What the bearer check must refuse without a database read: revoked access tokens (by jti) and the
 * client IDs of deleted clients. Changes made by this process apply at once; changes made by other
 * replicas arrive through `sync`, which reads only rows newer than the last one seen.
 */
export class RevocationList {
  private readonly jtis = new Map<string, number>();
  private readonly clients = new Map<string, number>();
  private syncedUpTo = 0;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly now: () => number,
  ) {}

  isRevoked(jti: string, clientId: string): boolean {
    return this.jtis.has(jti) || this.clients.has(clientId);
  }

  /** Records revoked access tokens; `expiresAt` is when the entry may be forgotten. */
  async revokeTokens(tokens: readonly { jti: string; expiresAt: number }[]): Promise<void> {
    if (tokens.length === 0) return;
    for (const t of tokens) this.jtis.set(t.jti, t.expiresAt);
    const revokedAt = this.now();
    await this.db
      .insertInto('oauth2_revocations')
      .values(
        tokens.map((t) => ({
          kind: 'jti' as const,
          value: t.jti,
          revoked_at: revokedAt,
          expires_at: t.expiresAt,
        })),
      )
      .onConflict((oc) => oc.doNothing())
      .execute();
  }

  /** Records a deleted client: its access tokens are refused until the last one has expired. */
  async revokeClient(clientId: string, lastTokenExpiresAt: number): Promise<void> {
    this.clients.set(clientId, lastTokenExpiresAt);
    await this.db
      .insertInto('oauth2_revocations')
      .values({ kind: 'client', value: clientId, revoked_at: this.now(), expires_at: lastTokenExpiresAt })
      .onConflict((oc) => oc.doNothing())
      .execute();
  }

  /** Loads entries recorded since the last sync (by any replica) and forgets expired ones. */
  async sync(): Promise<void> {
    const now = this.now();
    // Re-read a small overlap: a row committed late by another replica may carry an older revoked_at.
    const since = Math.max(0, this.syncedUpTo - 10_000);
    const rows = await this.db
      .selectFrom('oauth2_revocations')
      .select(['kind', 'value', 'revoked_at', 'expires_at'])
      .where('revoked_at', '>=', since)
      .where('expires_at', '>', now)
      .execute();
    for (const row of rows) {
      (row.kind === 'jti' ? this.jtis : this.clients).set(row.value, row.expires_at);
      if (row.revoked_at > this.syncedUpTo) this.syncedUpTo = row.revoked_at;
    }
    for (const map of [this.jtis, this.clients]) {
      for (const [key, expiresAt] of map) if (expiresAt <= now) map.delete(key);
    }
  }

  /** Deletes rows that no longer matter (every token they concern has expired). */
  async prune(): Promise<void> {
    await this.db.deleteFrom('oauth2_revocations').where('expires_at', '<=', this.now()).execute();
  }
}
