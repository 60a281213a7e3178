import { randomUUID } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import type { Storage } from '../../../storage/database.js';
import type { Database, UnsValueTable } from '../../../storage/tables.js';
import type { PublishRecord } from '../publish-record.js';
import type { Quality } from '../record-fields.js';
import type { Violation } from '../schema-evaluation.js';
import { depthOf, nameOf, parentOf } from '../topic-path.js';
import type { HistorianLayout } from './historian-layout.js';
import { upsertValues } from './value-upsert.js';

/** A record that passed validation and schema evaluation, with the quality to store. */
export interface AcceptedRecord {
  record: PublishRecord;
  quality: Quality;
  violations: Violation[];
}

/** What one publisher hands to group commit: records of one organization, committed all or nothing. */
export interface CommitJob {
  organizationId: string;
  records: AcceptedRecord[];
  receivedUs: number;
}

// Rows per statement: stays under SQLite's 32,766 and PostgreSQL's 65,535 bind parameters.
const CHUNK = 1000;
const TOPIC_CACHE_LIMIT = 500_000;

function chunks<T>(items: readonly T[], size = CHUNK): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

const cacheKey = (organizationId: string, path: string) => `${organizationId}\u0000${path}`;

/**
 * Writes committed publishes: creates missing topic nodes (INSERT ... ON CONFLICT DO NOTHING, so each
 * node exists once under any concurrency), upserts history on (topic, declared timestamp) so a retry
 * replaces its earlier record, advances the latest value only when the declared timestamp is not older
 * than the stored one, and records violations. Everything of one call is one transaction.
 */
export class HistorianWriter {
  /** Topic ids by organization and path; only ids of committed rows enter it. */
  private readonly topicIds = new Map<string, number>();

  constructor(
    private readonly storage: Storage,
    private readonly layout: HistorianLayout,
  ) {}

  /** Forgets cached topic ids under `path` (itself and its subtree), after a delete. */
  forgetSubtree(organizationId: string, path: string): void {
    const exact = cacheKey(organizationId, path);
    const below = `${exact}/`;
    for (const key of this.topicIds.keys()) {
      if (key === exact || key.startsWith(below)) this.topicIds.delete(key);
    }
  }

  /** Forgets every cached topic id, after the bus may have missed a delete. */
  forgetAll(): void {
    this.topicIds.clear();
  }

  /** Writes every job in one transaction. */
  async write(jobs: readonly CommitJob[]): Promise<void> {
    const timestamps: number[] = [];
    for (const job of jobs) for (const accepted of job.records) timestamps.push(accepted.record.timestampUs);
    await this.layout.ensureDays(timestamps);
    const learned = new Map<string, number>();
    // durableWrite: on SQLite the disk flush of the commit does not block the event loop.
    await this.storage.durableWrite((db) => this.commit(db, jobs, learned));
    if (this.topicIds.size + learned.size > TOPIC_CACHE_LIMIT) this.topicIds.clear();
    for (const [key, id] of learned) this.topicIds.set(key, id);
  }

  private commit(db: Kysely<Database>, jobs: readonly CommitJob[], learned: Map<string, number>) {
    return db.transaction().execute(async (trx) => {
      const ids = await this.ensureTopics(trx, jobs, learned);
      const values = new Map<string, UnsValueTable>();
      const violations: Database['uns_violations'][] = [];
      for (const job of jobs) {
        for (const { record, quality, violations: found } of job.records) {
          const topicId = ids.get(cacheKey(job.organizationId, record.topic))!;
          // The same topic and timestamp twice in one commit: the later record wins, as a retry would.
          values.set(`${topicId} ${record.timestampUs}`, {
            topic_id: topicId,
            ts_us: record.timestampUs,
            value_json: record.valueJson,
            value_num: typeof record.value === 'number' ? record.value : null,
            quality,
            source: record.source,
            received_us: job.receivedUs,
          });
          for (const violation of found) {
            violations.push({
              id: randomUUID(),
              organization_id: job.organizationId,
              topic_id: topicId,
              ts_us: record.timestampUs,
              kind: violation.kind,
              message: violation.message,
              received_us: job.receivedUs,
            });
          }
        }
      }
      // A stable order keeps concurrent transactions from deadlocking on PostgreSQL.
      const rows = [...values.values()].sort((a, b) => a.topic_id - b.topic_id || a.ts_us - b.ts_us);
      await upsertValues(trx, this.storage, 'uns_values', rows);
      const newest = new Map<number, UnsValueTable>();
      for (const row of rows) {
        const held = newest.get(row.topic_id);
        if (!held || row.ts_us >= held.ts_us) newest.set(row.topic_id, row);
      }
      await upsertValues(trx, this.storage, 'uns_latest', [...newest.values()]);
      for (const part of chunks(violations)) await trx.insertInto('uns_violations').values(part).execute();
    });
  }

  /** Ids of every topic the jobs publish to, creating missing nodes and their ancestors. */
  private async ensureTopics(
    trx: Transaction<Database>,
    jobs: readonly CommitJob[],
    learned: Map<string, number>,
  ): Promise<Map<string, number>> {
    const ids = new Map<string, number>();
    const missing = new Map<string, Set<string>>();
    for (const job of jobs) {
      for (const { record } of job.records) {
        const key = cacheKey(job.organizationId, record.topic);
        const cached = this.topicIds.get(key);
        if (cached !== undefined) {
          ids.set(key, cached);
          continue;
        }
        let paths = missing.get(job.organizationId);
        if (!paths) {
          paths = new Set();
          missing.set(job.organizationId, paths);
        }
        paths.add(record.topic);
        for (const parent of record.parentPaths) paths.add(parent);
      }
    }
    const now = Date.now();
    for (const [organizationId, pathSet] of [...missing].sort(([a], [b]) => (a < b ? -1 : 1))) {
      const paths = [...pathSet].sort();
      for (const part of chunks(paths)) {
        await trx
          .insertInto('uns_topics')
          .values(
            part.map((path) => ({
              organization_id: organizationId,
              path,
              parent_path: parentOf(path),
              name: nameOf(path),
              depth: depthOf(path),
              description: null,
              created_at: now,
            })),
          )
          .onConflict((oc) => oc.columns(['organization_id', 'path']).doNothing())
          .execute();
        const found = await trx
          .selectFrom('uns_topics')
          .select(['id', 'path'])
          .where('organization_id', '=', organizationId)
          .where('path', 'in', part)
          .execute();
        for (const row of found) {
          const key = cacheKey(organizationId, row.path);
          ids.set(key, Number(row.id));
          learned.set(key, Number(row.id));
        }
      }
    }
    return ids;
  }
}
