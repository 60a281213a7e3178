import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Actor } from '../../../platform/actor.js';
import type { Clock } from '../../../platform/clock.js';
import { badRequest, conflict, notFound } from '../../../platform/errors.js';
import type { ListParams } from '../../../platform/list-query.js';
import { isoTime } from '../../../platform/schemas.js';
import type { Database } from '../../../storage/tables.js';
import type { ImpactCheck } from '../../graph/impact/guard-impact.js';
import type { EntityVersion, EntityVersionsRepository } from '../../versions/entity-versions.repository.js';
import { createdColumns } from '../../versions/stamped-rows.js';
import { type VersionedChange, VersionHistory } from '../../versions/version-history.js';
import { VersionedLifecycle } from '../../versions/versioned-lifecycle.js';
import type { EdgeWriter } from '../../versions/versioned-rows.js';
import { auditConnection } from '../connections/connection-audit.js';
import type { ConnectionRow } from '../connections/connections.repository.js';
import type { ConnectionsService } from '../connections/connections.service.js';
import type { FunctionDirection } from '../drivers/driver.js';
import { assertValid, protocolOf } from '../protocols/protocol-registry.js';
import { checkDefinition, functionTypeOf, type UnsTarget } from './function-definition.js';
import { importRows } from './function-import.js';
import { type PreviewBody, previewRead } from './function-preview.js';
import { FUNCTION_ENTITY, type FunctionSnapshot, functionRows } from './function-versions.js';
import type { FunctionRow, FunctionsRepository } from './functions.repository.js';
import type { ConnectorFunction, CreateFunctionBody, UpdateFunctionBody } from './functions.schemas.js';
import { type FunctionParameter, resolveParameters, substitute } from './placeholders.js';

/** The result of one execute, as the API answers it. */
export interface ExecutionResult {
  success: boolean;
  value: unknown;
  quality: 0 | 1 | 2;
  durationMs: number;
  timestamp: string;
  error?: string;
}

/** Runs a function on a connection's session (the running one, or one opened for the call). */
export interface FunctionExecutor {
  execute(connection: ConnectionRow, type: string, config: Record<string, unknown>): Promise<ExecutionResult>;
}

export interface FunctionsServiceDeps {
  db: Kysely<Database>;
  repository: FunctionsRepository;
  connections: ConnectionsService;
  clock: Clock;
  versions: EntityVersionsRepository;
  /** The dependency graph's edges, rewritten on every save. */
  edges: EdgeWriter;
  topicPrefix: string;
  executor: () => FunctionExecutor;
  changes?: (connectionId: string) => void;
}

export { functionTypeOf, type UnsTarget } from './function-definition.js';

/** Functions of a connection: CRUD, clone, import, revert and execute; every change a version. */
export class FunctionsService {
  readonly history: VersionHistory;

  constructor(private readonly deps: FunctionsServiceDeps) {
    this.history = new VersionHistory(deps.versions, FUNCTION_ENTITY, 'function');
  }

  toFunction(row: FunctionRow, protocol: string): ConnectorFunction {
    return {
      id: row.id,
      connectionId: row.connection_id,
      name: row.name,
      description: row.description,
      type: row.type,
      direction: (protocolOf(protocol).functionTypes.get(row.type)?.type.direction ??
        'read') as FunctionDirection,
      config: JSON.parse(row.config) as Record<string, unknown>,
      parameters: JSON.parse(row.parameters) as FunctionParameter[],
      uns: row.uns ? (JSON.parse(row.uns) as UnsTarget) : null,
      version: row.version,
      createdAt: isoTime(row.created_at),
      createdBy: row.created_by,
      updatedAt: isoTime(row.updated_at),
      updatedBy: row.updated_by,
    };
  }

  /** The versioned lifecycle of the functions of `connection` (their audit entries are the connection's). */
  private lifecycle(connection: ConnectionRow): VersionedLifecycle<FunctionRow, FunctionSnapshot> {
    const rows = functionRows(this.deps.repository, (row) => this.toFunction(row, connection.protocol));
    return new VersionedLifecycle(rows, this.deps);
  }

  /** Runs `work` in a transaction: the stamp of the change (who, when) and the transaction. */
  private write(
    organizationId: string,
    actor: Actor,
    work: (
      trx: Kysely<Database>,
      stamp: { organizationId: string; actor: Actor; at: number },
    ) => Promise<void>,
  ): Promise<void> {
    return this.deps.db
      .transaction()
      .execute((trx) => work(trx, { organizationId, actor, at: this.deps.clock.now() }));
  }

  /** Stores new functions of one connection in one transaction, their versions and one audit entry. */
  private writeNew(
    organizationId: string,
    actor: Actor,
    connection: ConnectionRow,
    rows: FunctionRow[],
    changeType: 'create' | 'import',
    action: string,
  ) {
    const connectionId = connection.id;
    return this.write(organizationId, actor, async (trx, stamp) => {
      await this.lifecycle(connection).createMany(trx, { ...stamp, rows, changeType });
      await auditConnection(trx, stamp.at, {
        organizationId,
        actor,
        action,
        connectionId,
        before: { functions: {} },
        after: {
          functions: Object.fromEntries(rows.map((r) => [r.id, this.toFunction(r, connection.protocol)])),
        },
      });
    });
  }

  private async connectionOf(organizationId: string, connectionId: string) {
    return this.deps.connections.get(organizationId, connectionId);
  }

  async get(organizationId: string, connectionId: string, id: string) {
    const connection = await this.connectionOf(organizationId, connectionId);
    const row = await this.deps.repository.find(connectionId, id);
    if (!row) throw notFound('function');
    return { connection, row };
  }

  async list(organizationId: string, connectionId: string, type: string | undefined, params: ListParams) {
    const connection = await this.connectionOf(organizationId, connectionId);
    const { rows, pagination } = await this.deps.repository.list(connectionId, type, params);
    return { data: rows.map((r) => this.toFunction(r, connection.protocol)), pagination };
  }

  private newRow(
    organizationId: string,
    connectionId: string,
    body: CreateFunctionBody,
    actor: Actor,
  ): FunctionRow {
    const now = this.deps.clock.now();
    return {
      id: randomUUID(),
      organization_id: organizationId,
      connection_id: connectionId,
      name: body.name,
      description: body.description ?? '',
      type: body.type,
      config: JSON.stringify(body.config),
      parameters: JSON.stringify(body.parameters ?? []),
      uns: body.uns ? JSON.stringify(body.uns) : null,
      ...createdColumns(actor, now),
    };
  }

  async create(organizationId: string, connectionId: string, body: CreateFunctionBody, actor: Actor) {
    const connection = await this.connectionOf(organizationId, connectionId);
    checkDefinition(
      connection.protocol,
      {
        type: body.type,
        config: body.config,
        parameters: (body.parameters ?? []) as FunctionParameter[],
        uns: (body.uns ?? null) as UnsTarget | null,
      },
      this.deps.topicPrefix,
    );
    const row = this.newRow(organizationId, connectionId, body, actor);
    const lifecycle = this.lifecycle(connection);
    await lifecycle.guardName(this.deps.db, row, undefined, () =>
      this.write(organizationId, actor, (trx, stamp) => lifecycle.create(trx, { ...stamp, row })),
    );
    if (row.uns) this.deps.changes?.(connectionId);
    return this.toFunction(row, connection.protocol);
  }

  async update(
    organizationId: string,
    connectionId: string,
    id: string,
    body: UpdateFunctionBody,
    actor: Actor,
    change: VersionedChange = {},
  ) {
    const { connection, row } = await this.get(organizationId, connectionId, id);
    if (body.version !== undefined) this.history.checkBasedOn(row.version, body.version);
    const current = this.toFunction(row, connection.protocol);
    const next = {
      type: body.type ?? current.type,
      config: body.config ?? current.config,
      parameters: (body.parameters ?? current.parameters) as FunctionParameter[],
      uns: (body.uns === undefined ? current.uns : body.uns) as UnsTarget | null,
    };
    checkDefinition(connection.protocol, next, this.deps.topicPrefix);
    const patch: Partial<FunctionRow> = {
      name: body.name ?? row.name,
      description: body.description ?? row.description,
      type: next.type,
      config: JSON.stringify(next.config),
      parameters: JSON.stringify(next.parameters),
      uns: next.uns ? JSON.stringify(next.uns) : null,
      version: row.version + 1,
      updated_at: this.deps.clock.now(),
      updated_by: actor.userId,
    };
    const saved = { ...row, ...patch };
    const lifecycle = this.lifecycle(connection);
    // Nothing to save: no version, and the connection's subscriptions are left alone.
    if (lifecycle.unchanged(row, saved)) return current;
    await lifecycle.guardName(this.deps.db, saved, row, () =>
      this.write(organizationId, actor, (trx, stamp) =>
        lifecycle.save(trx, { ...stamp, current: row, next: saved, change }),
      ),
    );
    if (row.uns || patch.uns) this.deps.changes?.(connectionId);
    return this.toFunction(saved, connection.protocol);
  }

  /** Restores `version`'s content as a new version of the function (history is never rewritten). */
  async revert(
    organizationId: string,
    connectionId: string,
    id: string,
    version: EntityVersion,
    actor: Actor,
  ) {
    const { row } = await this.get(organizationId, connectionId, id);
    const { name, description, type, config, parameters, uns } = version.snapshot as FunctionSnapshot;
    return this.update(
      organizationId,
      connectionId,
      id,
      { name, description, type, config, parameters, uns, version: row.version },
      actor,
      { changeType: 'revert', revertedFrom: version.version },
    );
  }

  async remove(organizationId: string, connectionId: string, id: string, actor: Actor, check?: ImpactCheck) {
    const { connection, row } = await this.get(organizationId, connectionId, id);
    await this.write(organizationId, actor, async (trx, stamp) => {
      await check?.(trx);
      await this.lifecycle(connection).delete(trx, { ...stamp, row });
    });
    if (row.uns) this.deps.changes?.(connectionId);
  }

  async clone(
    organizationId: string,
    connectionId: string,
    id: string,
    name: string | undefined,
    actor: Actor,
  ) {
    const { connection, row } = await this.get(organizationId, connectionId, id);
    const cloneName = name ?? `${row.name} (copy)`.slice(0, 100);
    const now = this.deps.clock.now();
    const copy: FunctionRow = {
      ...row,
      id: randomUUID(),
      name: cloneName,
      uns: null,
      ...createdColumns(actor, now),
    };
    await this.write(organizationId, actor, (trx, stamp) =>
      this.lifecycle(connection).create(trx, { ...stamp, row: copy, changeType: 'clone' }),
    );
    return this.toFunction(copy, connection.protocol);
  }

  /** Copies every function of one connection to its clone, inside the clone's transaction. */
  async copyAll(fromId: string, clone: ConnectionRow, actor: Actor, trx: Kysely<Database>) {
    const now = this.deps.clock.now();
    const rows = (await this.deps.repository.in(trx).allOf(fromId)).map((row) => ({
      ...row,
      id: randomUUID(),
      organization_id: clone.organization_id,
      connection_id: clone.id,
      ...createdColumns(actor, now),
    }));
    await this.lifecycle(clone).createMany(trx, {
      organizationId: clone.organization_id,
      rows,
      changeType: 'clone',
      actor,
      at: now,
    });
  }

  /**
   * Several functions at once, all or nothing, in one transaction (the functions made for the nodes
   * picked in a browse): each checked as a create checks it (400 naming `<field>` of the first bad one),
   * a name taken in the connection or twice in the batch (ignoring case) 409 naming it.
   */
  async createMany(organizationId: string, connectionId: string, bodies: CreateFunctionBody[], actor: Actor) {
    const connection = await this.connectionOf(organizationId, connectionId);
    const names = await this.deps.repository.namesOf(connectionId);
    for (const body of bodies) {
      checkDefinition(
        connection.protocol,
        {
          type: body.type,
          config: body.config,
          parameters: (body.parameters ?? []) as FunctionParameter[],
          uns: (body.uns ?? null) as UnsTarget | null,
        },
        this.deps.topicPrefix,
      );
      const key = body.name.toLowerCase();
      if (names.has(key))
        throw conflict(
          `a function named '${body.name}' already exists in this connection (names are unique ignoring case); nothing was created`,
        );
      names.add(key);
    }
    const rows = bodies.map((body) => this.newRow(organizationId, connectionId, body, actor));
    await this.writeNew(organizationId, actor, connection, rows, 'create', 'functions_created');
    if (rows.some((r) => r.uns)) this.deps.changes?.(connectionId);
    return rows.map((r) => this.toFunction(r, connection.protocol));
  }

  /** Bulk import, all or nothing: 400 listing every bad row (1-based), nothing created then. */
  async import(
    organizationId: string,
    connectionId: string,
    input: { functions?: unknown[] | undefined; csv?: string | undefined },
    actor: Actor,
  ) {
    const connection = await this.connectionOf(organizationId, connectionId);
    const names = await this.deps.repository.namesOf(connectionId);
    const { bodies, errors } = importRows(input, names, connection.protocol, this.deps.topicPrefix);
    const rows = bodies.map((body) => this.newRow(organizationId, connectionId, body, actor));
    if (errors.length > 0) throw badRequest(`nothing imported; ${errors.slice(0, 20).join('; ')}`);
    await this.writeNew(organizationId, actor, connection, rows, 'import', 'functions_imported');
    return rows.map((r) => this.toFunction(r, connection.protocol));
  }

  /** Runs a function now. Writes need `confirmWrites` and a connection that is not read-only. */
  async execute(
    organizationId: string,
    connectionId: string,
    id: string,
    body: { parameters?: Record<string, unknown> | undefined; confirmWrites?: boolean | undefined },
  ): Promise<ExecutionResult> {
    const { connection, row } = await this.get(organizationId, connectionId, id);
    const { type, validate } = functionTypeOf(connection.protocol, row.type);
    if (type.direction === 'subscribe') {
      throw badRequest(
        'a subscribe function runs while its connection runs (uns); it cannot be executed once',
      );
    }
    if (type.direction === 'write') {
      if (connection.read_only === 1)
        throw conflict('the connection is read-only; write functions are refused');
      if (body.confirmWrites !== true) {
        throw badRequest('confirmWrites must be true to execute a write function (it changes the device)');
      }
    }
    const values = resolveParameters(
      JSON.parse(row.parameters) as FunctionParameter[],
      body.parameters ?? {},
    );
    const config = substitute(JSON.parse(row.config), values) as Record<string, unknown>;
    assertValid(validate, config, 'config');
    const problem = type.checkConfig?.(config);
    if (problem) throw badRequest(problem);
    const found = await this.deps.connections.get(organizationId, connectionId);
    return this.deps.executor().execute(found, row.type, config);
  }

  /** A read function's config run once, not saved (see function-preview.ts). */
  async preview(organizationId: string, connectionId: string, body: PreviewBody): Promise<ExecutionResult> {
    const connection = await this.connectionOf(organizationId, connectionId);
    return previewRead(connection, this.deps.executor(), body);
  }
}
