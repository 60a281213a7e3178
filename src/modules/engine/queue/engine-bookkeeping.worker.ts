// The engine's bookkeeping thread on SQLite (sqlite-engine-thread.ts says why and what): one message is
// one transaction, the new executions and then the turn: node runs stored, ends recorded, executions
// claimed, the new ones among them (inserted as the claim leaves them).
import {
  openFile,
  prepareTemplate,
  type SqliteThreadData,
  serveSqliteThread,
} from '../../../storage/sqlite/sqlite-thread-serve.js';
import type {
  EngineThreadData,
  EnqueueBurst,
  ThreadMessage,
  TurnAnswer,
  TurnMessage,
} from './sqlite-engine-thread.js';

type ClaimedRow = TurnAnswer['claimed'][number];
interface Candidate {
  id: string;
  status: string;
  pipeline_id: string;
  pipeline_version: number;
  priority: number;
  queued_at: number;
  /** The row's rowid, where it was read: the queue's last tiebreak, where a next read starts. */
  k?: number;
}
interface Version {
  text: string;
  mode: string;
  limit: number;
}

serveSqliteThread<ThreadMessage, TurnAnswer | null, EngineThreadData & SqliteThreadData>((data) => {
  const db = openFile(data);
  const begin = db.prepare('begin immediate');
  const commit = db.prepare('commit');
  const rollback = db.prepare('rollback');
  const RUN_COLUMNS = data.runColumns;
  const saveRun = db.prepare(
    `insert into engine_node_runs (id, execution_id, ${RUN_COLUMNS.join(', ')}) values (` +
      ['?', '?', ...RUN_COLUMNS.map(() => '?')].join(', ') +
      `) ${data.runConflict}`,
  );
  // The claim, the skip and the finish are the Kysely path's own statements (sqlite-engine-thread.ts).
  const finish = prepareTemplate(db, data.templates.finish);
  const skip = prepareTemplate(db, data.templates.skip);
  const claim = prepareTemplate(db, data.templates.claim);
  const CANDIDATE_COLUMNS = 'id, status, pipeline_id, pipeline_version, priority, queued_at';
  const CANDIDATE = `select ${CANDIDATE_COLUMNS} from engine_executions where `;
  // As readCandidates (execution-claims.ts): the longest expired leases and the longest due waits, each
  // in its index's order, then in claim order.
  const resumable = db.prepare<unknown[], Candidate>(
    'select * from (' +
      `select * from (${CANDIDATE}status = 'running' and lease_until < ? order by lease_until limit ?) ` +
      `union all select * from (${CANDIDATE}status = 'waiting' and run_at <= ? order by run_at limit ?)` +
      ') order by priority, queued_at limit ?',
  );
  // The queue in claim order, read a part at a time: the first `?`, then the `?` after a row read.
  const QUEUED = `select rowid as k, ${CANDIDATE_COLUMNS} from engine_executions where status = 'queued'`;
  const queueStart = db.prepare<unknown[], Candidate>(
    `${QUEUED} order by priority, queued_at, rowid limit ?`,
  );
  const queueAfter = db.prepare<unknown[], Candidate>(
    `${QUEUED} and (priority, queued_at, rowid) > (?, ?, ?) order by priority, queued_at, rowid limit ?`,
  );
  const definitionsOf = db.prepare<unknown[], { pipeline_version: number; definition: string }>(
    'select pipeline_version, definition from engine_definitions where pipeline_id = ?',
  );
  const definitionInRow = db
    .prepare<unknown[], string>("select definition from engine_executions where id = ? and definition != ''")
    .pluck();
  const runningOf = db
    .prepare<unknown[], number>(
      "select count(*) from engine_executions where pipeline_id = ? and status = 'running' " +
        'and lease_until >= ?',
    )
    .pluck();
  const CLAIMED = data.claimedColumns;
  const claimedRow = db.prepare<unknown[], ClaimedRow>(
    `select ${CLAIMED.join(', ')} from engine_executions where id = ?`,
  );

  // The rows this connection inserted as queued and has not claimed, by id: their values as inserted
  // (executionColumns order). A queued row never changes but to leave the queue (a claim, a skip, a
  // cancel: each a final change of status), so the claim of one answers these values with the claim's
  // changes instead of reading the row back, which cost more than the claim's update itself (about 10 of
  // 14 µs a claim). A transaction's inserts are forgotten if it rolls back, its claims once it commits.
  // Bounded in rows and in characters (a trigger's value can be large); the oldest go first, and a row
  // larger than ROW_CHARS is not kept (its claim reads it back).
  const inserted = new Map<string, unknown[]>();
  const ROWS = 65536;
  const CHARS = 16 * 1024 * 1024;
  const ROW_CHARS = 64 * 1024;
  let chars = 0;
  const COLUMN: Record<string, number> = Object.fromEntries(data.executionColumns.map((c, i) => [c, i]));
  const at = (values: unknown[], column: string) => values[COLUMN[column]!];
  const set = (values: unknown[], column: string, value: unknown) => {
    values[COLUMN[column]!] = value;
  };
  const charsOf = (values: unknown[]) =>
    ((at(values, 'trigger') as string | null) ?? '').length +
    ((at(values, 'input') as string | null) ?? '').length;
  let insertedNow: string[] = [];
  let claimedNow: string[] = [];
  function forget(id: string): void {
    const values = inserted.get(id);
    if (values === undefined) return;
    inserted.delete(id);
    chars -= charsOf(values);
  }
  function remember(values: unknown[]): void {
    const size = charsOf(values);
    if (at(values, 'status') !== 'queued' || size > ROW_CHARS) return;
    const id = at(values, 'id') as string;
    inserted.set(id, values);
    chars += size;
    insertedNow.push(id);
    while (inserted.size > ROWS || chars > CHARS) forget(inserted.keys().next().value!);
  }
  function settle(committed: boolean): void {
    for (const id of committed ? claimedNow : insertedNow) forget(id);
    insertedNow = [];
    claimedNow = [];
  }
  // The row as the claim left it: the values inserted, or read back (a row of another connection or
  // from before this thread, a resumed or expired one).
  function rowAfterClaim(candidate: Candidate, replica: string, now: number, leaseMs: number): ClaimedRow {
    const values = candidate.status === 'queued' ? inserted.get(candidate.id) : undefined;
    if (values === undefined) return claimedRow.get(candidate.id)!;
    claimedNow.push(candidate.id);
    return rowOf(claimValues([...values], replica, now, leaseMs));
  }
  /** Sets in `values` what a claim sets (claimUpdate, execution-claims.ts); answers them. */
  function claimValues(values: unknown[], replica: string, now: number, leaseMs: number): unknown[] {
    set(values, 'status', 'running');
    set(values, 'locked_by', replica);
    set(values, 'lease_until', now + leaseMs);
    set(values, 'claims', (at(values, 'claims') as number) + 1);
    set(values, 'started_at', at(values, 'started_at') ?? now);
    return values;
  }
  function rowOf(values: unknown[]): ClaimedRow {
    const row: Record<string, unknown> = {};
    for (const c of CLAIMED) row[c] = at(values, c);
    return row as unknown as ClaimedRow;
  }

  // A version's definition text and concurrency, by pipeline id and version (versions never change).
  const versions = new Map<string, Version>();
  function versionOf(candidate: Candidate): Version | undefined {
    const key = `${candidate.pipeline_id}@${candidate.pipeline_version}`;
    let version = versions.get(key);
    if (version !== undefined) return version;
    for (const row of definitionsOf.all(candidate.pipeline_id)) {
      const k = `${candidate.pipeline_id}@${row.pipeline_version}`;
      if (!versions.has(k)) versions.set(k, describe(row.definition));
    }
    version = versions.get(key);
    if (version === undefined) {
      // Rows from before engine_definitions hold their own text.
      const text = definitionInRow.get(candidate.id);
      if (text === undefined) return undefined;
      version = describe(text);
      versions.set(key, version);
    }
    if (versions.size > 1000) versions.delete(versions.keys().next().value!);
    return version;
  }
  function describe(text: string): Version {
    const { mode, max } = JSON.parse(text).settings.concurrency as { mode: string; max: number };
    return { text, mode, limit: mode === 'parallel' ? max : 1 };
  }

  /** Whether `a` comes before `b` in the queue: higher priority (a lower number), then queued earlier. */
  const ahead = (a: Candidate, b: Candidate) =>
    a.priority < b.priority || (a.priority === b.priority && a.queued_at < b.queued_at);
  const candidateOf = (values: unknown[]): Candidate => ({
    id: at(values, 'id') as string,
    status: 'queued',
    pipeline_id: at(values, 'pipeline_id') as string,
    pipeline_version: at(values, 'pipeline_version') as number,
    priority: at(values, 'priority') as number,
    queued_at: at(values, 'queued_at') as number,
  });

  /**
   * As claimExecutions (execution-claims.ts), with `fresh`, the queued rows of this transaction's bursts,
   * not yet inserted: they join the stored candidates in queue order, and each is inserted as the claim
   * leaves it (running, skipped, or queued), written once. Inserted queued and then claimed, each was
   * written twice, the claim moving it from one partial index to another.
   *
   * The stored queue is read as the claim goes, as many rows as it still has room for, and again only
   * if some it read were passed over (their pipeline busy), up to `2 × max` queued rows in all (20 at
   * least), the limit of claimExecutions' one read. Read `2 × max` at once, claims read 75,783 queued
   * rows for 20,000 taken in the pipeline bench (20 at least when a turn had 3 slots free), each row a
   * lookup in the table; read as they go, in a profile of the bench the claim's own time fell from 607 to
   * 496 ms and the thread's busy time did not move (3,126 against 3,164 ms).
   */
  function claimUpTo(replica: string, now: number, leaseMs: number, max: number, fresh: unknown[][]) {
    const claimed: ClaimedRow[] = [];
    const definitions: Record<string, string> = {};
    if (max <= 0) {
      for (const values of fresh) insert(values);
      return { claimed, definitions };
    }
    const running = new Map<string, number>();
    const chosen: Candidate[] = [];
    const skipped = new Set<string>();
    const newcomers = new Map<string, unknown[]>();
    function consider(candidate: Candidate): void {
      const version = versionOf(candidate);
      if (version === undefined) return;
      if (candidate.status === 'queued') {
        const pipeline = candidate.pipeline_id;
        if (!running.has(pipeline)) running.set(pipeline, runningOf.get(pipeline, now)!);
        const busy = running.get(pipeline)! >= version.limit;
        if (busy && version.mode === 'skip') {
          if (newcomers.has(candidate.id)) skipped.add(candidate.id);
          else skip({ now, id: candidate.id });
        }
        if (busy) return;
        running.set(pipeline, running.get(pipeline)! + 1);
      }
      chosen.push(candidate);
    }
    // Those to resume first.
    for (const candidate of resumable.all(now, max, now, max, max)) consider(candidate);
    // Then the queue: the new ones after the stored of the same place.
    const joining: Candidate[] = [];
    for (const values of fresh) {
      const candidate = candidateOf(values);
      newcomers.set(candidate.id, values);
      joining.push(candidate);
    }
    joining.sort((a, b) => (ahead(a, b) ? -1 : ahead(b, a) ? 1 : 0));
    const most = Math.max(20, max * 2);
    let page: Candidate[] = [];
    let read = 0;
    let last: Candidate | undefined;
    let end = false;
    for (let i = 0, j = 0; chosen.length < max; ) {
      if (i >= page.length && !end) {
        const want = Math.min(max - chosen.length, most - read);
        // At its limit, the read may not have reached stored executions that come before the new ones
        // left: those wait for a later claim, queued.
        if (want <= 0) break;
        page =
          last === undefined
            ? queueStart.all(want)
            : queueAfter.all(last.priority, last.queued_at, last.k, want);
        i = 0;
        read += page.length;
        end = page.length < want;
        last = page.at(-1) ?? last;
        continue;
      }
      const stored = page[i];
      const next = joining[j];
      if (next !== undefined && (stored === undefined || ahead(next, stored))) {
        j += 1;
        consider(next);
      } else if (stored !== undefined) {
        i += 1;
        consider(stored);
      } else break;
    }
    const taken = new Set(chosen.map((c) => c.id));
    for (const values of fresh) {
      const id = at(values, 'id') as string;
      // No other replica sees it before the commit: the claim needs no condition.
      if (taken.has(id)) claimValues(values, replica, now, leaseMs);
      else if (skipped.has(id)) {
        set(values, 'status', 'skipped');
        set(values, 'reason', 'overlap');
        set(values, 'finished_at', now);
      }
      insert(values);
    }
    for (const candidate of chosen) {
      const values = newcomers.get(candidate.id);
      let row: ClaimedRow;
      if (values !== undefined) row = rowOf(values);
      else if (claim({ replica, leaseUntil: now + leaseMs, now, id: candidate.id }).changes === 1)
        row = rowAfterClaim(candidate, replica, now, leaseMs);
      else continue;
      // No other claim came between the read and the update: this is the execution's first.
      row.fromQueue = candidate.status === 'queued' && row.claims === 1;
      claimed.push(row);
      const key = `${row.pipeline_id}@${row.pipeline_version}`;
      definitions[key] = versions.get(key)!.text;
    }
    return { claimed, definitions };
  }

  const storeDefinition = db.prepare(
    'insert into engine_definitions (organization_id, pipeline_id, ' +
      'pipeline_version, definition) values (?, ?, ?, ?) on conflict (pipeline_id, pipeline_version) do nothing',
  );
  const COLUMNS = data.executionColumns;
  const insertExecution = db.prepare(
    `insert into engine_executions (${COLUMNS.join(', ')}) values (${COLUMNS.map(() => '?').join(', ')})`,
  );

  function insert(values: unknown[]): void {
    insertExecution.run(values);
    remember(values);
  }

  /** Stores a burst; its queued rows go to `held` instead, if given (a claim in this turn inserts them). */
  function enqueue({ definitions, executions }: EnqueueBurst, held: unknown[][] | undefined): void {
    for (const definition of definitions) storeDefinition.run(definition);
    for (const values of executions)
      if (held !== undefined && at(values, 'status') === 'queued') held.push(values);
      else insert(values);
  }

  function turn({ replica, runs, finishes, now, leaseMs, max }: TurnMessage, fresh: unknown[][]): TurnAnswer {
    for (const run of runs) saveRun.run(run);
    const finished: string[] = [];
    for (const f of finishes) if (finish({ replica, ...f }).changes === 1) finished.push(f.id);
    return { finished, ...claimUpTo(replica, now, leaseMs, max, fresh) };
  }

  return {
    close: () => db.close(),
    // One transaction: the new executions first (a claim in the same turn may take them), then the turn.
    run({ enqueues, turn: next }) {
      begin.run();
      try {
        const fresh: unknown[][] = [];
        for (const burst of enqueues) enqueue(burst, next ? fresh : undefined);
        const answer = next ? turn(next, fresh) : null;
        commit.run();
        settle(true);
        return answer;
      } catch (error) {
        if (db.inTransaction) rollback.run();
        settle(false);
        throw error;
      }
    },
  };
});
