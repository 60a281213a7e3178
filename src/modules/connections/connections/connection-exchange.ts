import { randomUUID } from 'node:crypto';
import type { ConnectionFunctionTable, ConnectionTable } from '../../../storage/tables.js';
import type {
  BundleInput,
  ExchangeAdapter,
  PlanAction,
  PlanContext,
} from '../../graph/kinds/kind-exchange.js';
import type { FunctionSnapshot } from '../functions/function-versions.js';
import { DRIVERS, protocolOf } from '../protocols/protocol-registry.js';
import { writeConnections } from './connection-import.js';
import { isSecretKey } from './connection-secrets.js';
import type { ConnectionSnapshot } from './connection-snapshot.js';
import { openSecrets } from './secret-box.js';

/** A function in a bundle, inside its connection: what its version holds. */
export interface BundleFunction extends FunctionSnapshot {
  key: string;
  sourceId: string;
}

/**
 * A connection in a bundle, with its functions: what its version holds, but its config without its
 * secret fields (each set one is an input, filled at import).
 */
export interface BundleConnection extends ConnectionSnapshot {
  key: string;
  sourceId: string;
  functions: BundleFunction[];
}

/** The connections of an organization and their functions, as export reads them and import matches them. */
export interface ConnectionRows {
  connections: ConnectionTable[];
  functions: ConnectionFunctionTable[];
}

const KNOWN_PROTOCOLS = new Set(DRIVERS.map((d) => d.id));

/** The names of the secret fields set on a stored connection (their values never leave the secret box). */
function secretFieldsSet(row: ConnectionTable, keyEncryptionKey: Buffer): string[] {
  if (!row.secrets) return [];
  const layout = protocolOf(row.protocol);
  return Object.keys(openSecrets(row.secrets, row.id, keyEncryptionKey)).filter((key) =>
    isSecretKey(layout, key),
  );
}

/** Plans the functions of one bundle connection: a function follows its connection. */
function planFunctions(
  c: BundleConnection,
  connection: PlanAction,
  rows: ConnectionRows,
  context: PlanContext,
) {
  const fresh = connection.action === 'create' || connection.action === 'rename';
  const existingFunctions = fresh
    ? []
    : rows.functions.filter((r) => r.connection_id === connection.targetId);
  for (const f of c.functions ?? []) {
    const existing =
      context.options.match === 'id'
        ? existingFunctions.find((r) => r.id === f.sourceId)
        : existingFunctions.find((r) => r.name.toLowerCase() === f.name.toLowerCase());
    // New with a new connection; kept (or, on overwrite, updated) in an existing one.
    const action = !existing
      ? 'create'
      : connection.action === 'update'
        ? 'update'
        : connection.action === 'bind'
          ? 'bind'
          : 'skip';
    context.add({
      key: f.key,
      type: 'function',
      name: f.name,
      action,
      targetId: existing?.id ?? randomUUID(),
      newName: null,
    });
  }
}

/**
 * Connections in a bundle, each with its functions: keyed by name (functions by connection and name);
 * secret values never exported, each secret that is set becomes an input the import must fill. An
 * import can bind a bundle connection to an existing one instead of importing it.
 */
export const connectionExchange: ExchangeAdapter<ConnectionRows, BundleConnection> = {
  section: 'connections',
  async read(db, organizationId) {
    const [connections, functions] = await Promise.all([
      db.selectFrom('connections').selectAll().where('organization_id', '=', organizationId).execute(),
      db
        .selectFrom('connection_functions')
        .selectAll()
        .where('organization_id', '=', organizationId)
        .execute(),
    ]);
    const byName = <T extends { name: string }>(rows: T[]) =>
      rows.sort((a, b) => a.name.localeCompare(b.name));
    return { connections: byName(connections), functions: byName(functions) };
  },
  entities({ connections, functions }) {
    const connectionName = new Map(connections.map((c) => [c.id, c.name]));
    return [
      ...connections.map((c) => ({
        ref: `connection:${c.id}`,
        name: c.name,
        key: `connection:${c.name}`,
        requires: [],
      })),
      ...functions.map((f) => ({
        ref: `function:${f.id}`,
        name: f.name,
        key: `function:${connectionName.get(f.connection_id)}/${f.name}`,
        requires: [`connection:${f.connection_id}`],
        carrier: `connection:${f.connection_id}`,
      })),
    ];
  },
  export({ connections, functions }, { inBundle, keyOf, keyEncryptionKey }) {
    const inputs: BundleInput[] = [];
    const items = connections
      .filter((c) => inBundle('connection', c.id))
      .map((c) => {
        const key = keyOf('connection', c.id);
        // Only the names of the secrets that are set: their values never leave the secret box.
        for (const field of secretFieldsSet(c, keyEncryptionKey))
          inputs.push({
            key: `secret:${key}:config.${field}`,
            kind: 'secret',
            entity: key,
            path: `config.${field}`,
            description: `${field} of the ${c.protocol} connection ${JSON.stringify(c.name)}`,
          });
        return {
          key,
          sourceId: c.id,
          name: c.name,
          description: c.description,
          protocol: c.protocol,
          config: JSON.parse(c.config),
          labels: JSON.parse(c.labels),
          readOnly: Number(c.read_only) === 1,
          autoStart: Number(c.auto_start) === 1,
          functions: functions
            .filter((f) => f.connection_id === c.id)
            .map((f) => ({
              key: keyOf('function', f.id),
              sourceId: f.id,
              name: f.name,
              description: f.description,
              type: f.type,
              config: JSON.parse(f.config),
              parameters: JSON.parse(f.parameters),
              uns: f.uns === null ? null : JSON.parse(f.uns),
            })),
        };
      });
    return { items, inputs, requires: { protocols: items.map((c) => c.protocol) } };
  },
  keysOf: (c) => [c.key, ...(c.functions ?? []).map((f) => f.key)],
  count: (c) => 1 + c.functions.length,
  plan(items, rows, context) {
    const { options, problem, find, decide, add, inputs, requireInput } = context;
    const names = new Set(rows.connections.map((c) => c.name.toLowerCase()));
    for (const key of Object.keys(options.bindings ?? {}))
      if (!items.some((c) => c.key === key))
        problem(key, 'invalid_binding', `bindings: ${key} is not a connection of the bundle`);
    for (const c of items) {
      if (!KNOWN_PROTOCOLS.has(c.protocol))
        problem(
          c.key,
          'unsupported_protocol',
          `${c.key}: protocol ${JSON.stringify(c.protocol)} is not supported by this server`,
        );
      const boundId = options.bindings?.[c.key];
      let connection: PlanAction;
      if (boundId !== undefined) {
        if (!rows.connections.some((r) => r.id === boundId))
          problem(
            c.key,
            'invalid_binding',
            `bindings: ${c.key} names no connection of this organization (${boundId})`,
          );
        connection = {
          key: c.key,
          type: 'connection',
          name: c.name,
          action: 'bind',
          targetId: boundId,
          newName: null,
        };
        add(connection);
      } else {
        const existing = find(
          rows.connections,
          c.sourceId,
          (r) => r.name.toLowerCase() === c.name.toLowerCase(),
        );
        connection = decide('connection', c.key, c.name, existing, names, 100);
        if (connection.action === 'create' || connection.action === 'rename')
          for (const input of inputs) if (input.entity === c.key) requireInput(input.key);
      }
      planFunctions(c, connection, rows, context);
    }
  },
  write: writeConnections,
};
