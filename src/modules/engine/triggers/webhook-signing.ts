import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Kysely } from 'kysely';
import { openSecret, sealSecret } from '../../../platform/secrets/secret-box.js';
import type { Database } from '../../../storage/tables.js';

/** The prefix that makes a webhook signing secret recognisable in logs and secret scanners. */
export const WEBHOOK_SIGNING_PREFIX = 'mwhsec_';
/** The header carrying the call's time, in seconds since the epoch. */
export const TIMESTAMP_HEADER = 'x-meridian-timestamp';
/** The header carrying `v1=<hex HMAC-SHA256 of "<timestamp>.<body>">`, several comma-separated allowed. */
export const SIGNATURE_HEADER = 'x-meridian-signature';

const purposeOf = (pipelineId: string) => `engine_webhook_signing.secret:${pipelineId}`;
const SIGNATURE = /^v1=([0-9a-f]{64})$/;

/** A signed call as it arrived: its two headers and the body's exact bytes. */
export interface SignedCall {
  timestamp: string | undefined;
  signature: string | undefined;
  body: Buffer;
}

/**
 * Signed webhook calls, as GitHub and Stripe sign theirs: a secret per pipeline (32 random bytes, shown
 * once, sealed at rest with the key-encryption key and bound to its pipeline), an HMAC-SHA256 of
 * `<timestamp>.<body>` compared in constant time, a timestamp within `toleranceSeconds` of the server's
 * clock either way, and each signature accepted once: accepted ones are stored (as their SHA-256) in the
 * database until their timestamp leaves the window, so a replay is refused by every replica.
 */
export class WebhookSigning {
  constructor(
    private readonly deps: { db: Kysely<Database>; keyEncryptionKey: Buffer; toleranceSeconds: number },
  ) {}

  /** Issues (or replaces) the pipeline's signing secret and answers it; it is never readable again. */
  async issue(organizationId: string, pipelineId: string, userId: string | null, now: number) {
    const secret = `${WEBHOOK_SIGNING_PREFIX}${randomBytes(32).toString('base64url')}`;
    const row = {
      pipeline_id: pipelineId,
      organization_id: organizationId,
      secret_sealed: sealSecret(secret, purposeOf(pipelineId), this.deps.keyEncryptionKey),
      created_at: now,
      created_by: userId,
    };
    await this.deps.db
      .insertInto('engine_webhook_signing')
      .values(row)
      .onConflict((oc) =>
        oc.column('pipeline_id').doUpdateSet({
          secret_sealed: row.secret_sealed,
          created_at: row.created_at,
          created_by: row.created_by,
        }),
      )
      .execute();
    return secret;
  }

  /** Turns signing off for the pipeline; false when it was not on. */
  async revoke(organizationId: string, pipelineId: string): Promise<boolean> {
    const result = await this.deps.db
      .deleteFrom('engine_webhook_signing')
      .where('organization_id', '=', organizationId)
      .where('pipeline_id', '=', pipelineId)
      .executeTakeFirst();
    return Number(result.numDeletedRows) === 1;
  }

  /** When signing is on for the pipeline: since when. */
  async issuedAt(organizationId: string, pipelineId: string): Promise<number | undefined> {
    const row = await this.deps.db
      .selectFrom('engine_webhook_signing')
      .select('created_at')
      .where('organization_id', '=', organizationId)
      .where('pipeline_id', '=', pipelineId)
      .executeTakeFirst();
    return row ? Number(row.created_at) : undefined;
  }

  /**
   * Why a call to the pipeline's webhook is refused by its signing, or null when it passes (or the
   * pipeline does not sign). A call that passes has its signature recorded: the same call again is
   * refused until its timestamp leaves the window.
   */
  async check(pipelineId: string, call: SignedCall, now: number): Promise<string | null> {
    const row = await this.deps.db
      .selectFrom('engine_webhook_signing')
      .select('secret_sealed')
      .where('pipeline_id', '=', pipelineId)
      .executeTakeFirst();
    if (!row) return null;
    if (call.timestamp === undefined || call.signature === undefined) {
      return 'this webhook requires a signature: send X-Meridian-Timestamp (seconds since the epoch) and X-Meridian-Signature (v1=<hex HMAC-SHA256 of "<timestamp>.<body>">)';
    }
    if (!/^\d{1,12}$/.test(call.timestamp)) {
      return 'X-Meridian-Timestamp must be the time in whole seconds since the epoch';
    }
    const tolerance = this.deps.toleranceSeconds;
    const skew = Number(call.timestamp) - Math.floor(now / 1000);
    if (skew < -tolerance) {
      return `X-Meridian-Timestamp is ${-skew} s old; at most ${tolerance} s is accepted (sign each call when it is sent)`;
    }
    if (skew > tolerance) {
      return `X-Meridian-Timestamp is ${skew} s in the future; at most ${tolerance} s is accepted (check the sender's clock)`;
    }
    const secret = openSecret(row.secret_sealed, purposeOf(pipelineId), this.deps.keyEncryptionKey);
    const expected = createHmac('sha256', secret).update(`${call.timestamp}.`).update(call.body).digest();
    const matched = matchingSignature(call.signature, expected);
    if (!matched) return 'X-Meridian-Signature does not match the body and timestamp';
    return (await this.remember(pipelineId, matched, (Number(call.timestamp) + tolerance) * 1000, now))
      ? null
      : 'this signed call was already received; sign each call anew (a new timestamp)';
  }

  /** Records an accepted signature; false when it was recorded before (a replay). */
  private async remember(pipelineId: string, signature: Buffer, expiresAt: number, now: number) {
    const signatureHash = createHash('sha256').update(signature).digest('hex');
    const inserted = await this.deps.db
      .insertInto('engine_webhook_replays')
      .values({ pipeline_id: pipelineId, signature_hash: signatureHash, expires_at: expiresAt })
      .onConflict((oc) => oc.columns(['pipeline_id', 'signature_hash']).doNothing())
      .executeTakeFirst();
    // What has left the window cannot be replayed any more: the pipeline's expired entries go.
    await this.deps.db
      .deleteFrom('engine_webhook_replays')
      .where('pipeline_id', '=', pipelineId)
      .where('expires_at', '<', now)
      .execute();
    return Number(inserted.numInsertedOrUpdatedRows ?? 0) === 1;
  }
}

/**
 * The presented `v1=` signature equal to `expected`, compared in constant time, or null. Several may be
 * sent, comma-separated (a sender changing secrets signs with both); other schemes are ignored.
 */
function matchingSignature(header: string, expected: Buffer): Buffer | null {
  let matched: Buffer | null = null;
  for (const part of header.split(',').slice(0, 8)) {
    const hex = SIGNATURE.exec(part.trim())?.[1];
    if (!hex) continue;
    const presented = Buffer.from(hex, 'hex');
    if (timingSafeEqual(presented, expected)) matched = presented;
  }
  return matched;
}
