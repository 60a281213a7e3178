import type { Kysely } from 'kysely';
import type { Database, EngineDefinitionTable, EngineExecutionTable } from '../../../storage/tables.js';
import { inTextList } from '../../../storage/value-lists.js';
import { cachedDefinitionText } from './execution-rows.js';

/**
 * Where an execution's definition lives: once per pipeline version in `engine_definitions` (migration
 * 0022), or, for rows from before, in the execution row itself. Texts are cached per pipeline id and
 * version (execution-rows.ts; ids are random UUIDs, never another pipeline's), so the engine reads a
 * version's definition once.
 */

type VersionOf = Pick<EngineExecutionTable, 'id' | 'pipeline_id' | 'pipeline_version'>;

export const versionKey = (row: Pick<VersionOf, 'pipeline_id' | 'pipeline_version'>) =>
  `${row.pipeline_id}@${row.pipeline_version}`;

/** Stores the definitions of new executions (each version once; one already stored is left as it is). */
export async function storeDefinitions(
  db: Kysely<Database>,
  definitions: readonly EngineDefinitionTable[],
): Promise<void> {
  const distinct = new Map(definitions.map((d) => [versionKey(d), d]));
  if (distinct.size === 0) return;
  await db
    .insertInto('engine_definitions')
    .values([...distinct.values()])
    .onConflict((oc) => oc.columns(['pipeline_id', 'pipeline_version']).doNothing())
    .execute();
}

/** The definition text of each version the rows name, by versionKey: from the cache, else the database. */
export async function definitionTexts(
  db: Kysely<Database>,
  rows: readonly VersionOf[],
): Promise<Map<string, string>> {
  const texts = new Map<string, string>();
  const unseen = new Map<string, VersionOf>();
  for (const row of rows) {
    const key = versionKey(row);
    if (texts.has(key) || unseen.has(key)) continue;
    const text = cachedDefinitionText(row.pipeline_id, row.pipeline_version);
    if (text !== undefined) texts.set(key, text);
    else unseen.set(key, row);
  }
  if (unseen.size === 0) return texts;
  const pipelines = [...new Set([...unseen.values()].map((r) => r.pipeline_id))];
  for (const stored of await db
    .selectFrom('engine_definitions')
    .selectAll()
    .where(inTextList(db, 'pipeline_id', pipelines))
    .execute()) {
    const key = versionKey(stored);
    if (!unseen.has(key)) continue;
    texts.set(key, stored.definition);
    unseen.delete(key);
  }
  if (unseen.size === 0) return texts;
  // Versions that ran before 0022: one of their executions holds the text.
  for (const row of await db
    .selectFrom('engine_executions')
    .select(['pipeline_id', 'pipeline_version', 'definition'])
    .where(
      inTextList(
        db,
        'id',
        [...unseen.values()].map((r) => r.id),
      ),
    )
    .where('definition', '!=', '')
    .execute())
    texts.set(versionKey(row), row.definition);
  return texts;
}

/** The rows with their definition text filled in where it is stored apart. */
export async function withDefinitions<R extends VersionOf & { definition: string }>(
  db: Kysely<Database>,
  rows: R[],
): Promise<R[]> {
  const apart = rows.filter((r) => r.definition === '');
  if (apart.length === 0) return rows;
  const texts = await definitionTexts(db, apart);
  return rows.map((row) => {
    if (row.definition !== '') return row;
    const definition = texts.get(versionKey(row));
    if (definition === undefined)
      throw new Error(`the definition of pipeline ${versionKey(row)} (execution ${row.id}) is missing`);
    return { ...row, definition };
  });
}
