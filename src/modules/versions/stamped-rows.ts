import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Actor } from '../../platform/actor.js';
import type { Database } from '../../storage/tables.js';
import { nameHolderInOrganization, type VersionedTable } from '../../storage/versioned-rows.js';
import type { VersionedRows } from './versioned-rows.js';

/** The bookkeeping members of a versioned row as a service holds it (models, pipelines). */
export interface Stamped {
  id: string;
  organizationId: string;
  version: number;
  createdAt: number;
  createdBy: string | null;
  updatedAt: number;
  updatedBy: string | null;
}

/** A new entity's row: `content`, version 1, made and changed now by `actor`. */
export function newRow<C extends object>(
  organizationId: string,
  content: C,
  actor: Actor,
  now: number,
  id: string = randomUUID(),
): C & Stamped {
  return {
    id,
    organizationId,
    ...content,
    version: 1,
    createdAt: now,
    createdBy: actor.userId,
    updatedAt: now,
    updatedBy: actor.userId,
  };
}

/** The row a save of `content` over `current` stores: the next version, changed now by `actor`. */
export function nextRow<R extends Stamped>(current: R, content: Partial<R>, actor: Actor, now: number): R {
  return { ...current, ...content, version: current.version + 1, updatedAt: now, updatedBy: actor.userId };
}

/** The bookkeeping columns of a new entity's stored row (version 1, made and changed now by `actor`). */
export function createdColumns(actor: Actor, now: number) {
  return { version: 1, created_at: now, created_by: actor.userId, updated_at: now, updated_by: actor.userId };
}

/** A repository of rows with camel-cased bookkeeping (`ModelsRepository`, `PipelinesRepository`). */
export interface StampedRepository<Row extends Stamped> {
  insertMany(trx: Kysely<Database>, rows: Row[]): Promise<void>;
  update(trx: Kysely<Database>, row: Row, basedOn: number): Promise<boolean>;
  delete(trx: Kysely<Database>, organizationId: string, id: string): Promise<boolean>;
}

/**
 * The storage half of `VersionedRows` for a kind whose names are unique in the organization regardless
 * of case (models, pipelines): its rows kept by `repo` in `table`, edges following every write. The kind
 * adds its snapshot and audit entries.
 */
export function namedRows<Row extends Stamped & { name: string }>(
  repo: StampedRepository<Row>,
  table: VersionedTable,
  entityType: string,
): Omit<VersionedRows<Row>, 'snapshot'> {
  return {
    entityType,
    noun: entityType,
    edges: true,
    async nameTaken(trx, row, except) {
      const holder = await nameHolderInOrganization(
        trx,
        table,
        row.organizationId,
        row.name,
        except?.id ?? row.id,
      );
      if (!holder) return undefined;
      return `a ${entityType} named ${JSON.stringify(holder.name)} (id ${holder.id}) exists in this organization (names ignore case)`;
    },
    insert: (trx, rows) => repo.insertMany(trx, rows),
    update: (trx, next, basedOn) => repo.update(trx, next, basedOn),
    delete: async (trx, row) => void (await repo.delete(trx, row.organizationId, row.id)),
  };
}
