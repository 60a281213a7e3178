import { badRequest } from '../../../platform/errors.js';
import type { ConnectionFunctionTable, ConnectionTable } from '../../../storage/tables.js';
import type { WriteContext } from '../../graph/kinds/kind-exchange.js';
import { importVersions } from '../../versions/version-batches.js';
import { functionStorage } from '../functions/function-versions.js';
import { FunctionsRepository } from '../functions/functions.repository.js';
import { assertValid, protocolOf } from '../protocols/protocol-registry.js';
import type { BundleConnection, ConnectionRows } from './connection-exchange.js';
import { plaintextCredentials, withSecretValues } from './connection-secrets.js';
import { connectionStorage } from './connection-versions.js';
import { ConnectionsRepository } from './connections.repository.js';
import { openSecrets, sealSecrets } from './secret-box.js';

type Overwrite<Row> = { current: Row; next: Row };

/**
 * The rows an import writes for the bundle's connections: a new connection with the secrets given
 * as inputs, an overwrite keeping the stored secrets (under the same protocol) unless inputs replace
 * them; each config checked against its protocol with its secrets. Answers the connections to start.
 */
function connectionRowsOf(
  items: BundleConnection[],
  rows: ConnectionRows,
  context: WriteContext,
  /** The secrets each row to write holds: its version shows which are set, and they were just sealed. */
  sealed: WeakMap<ConnectionTable, Record<string, string>>,
) {
  const { organizationId, actor, now, options, inputs, action, writes, nameOf } = context;
  const kek = context.keyEncryptionKey;
  const created: ConnectionTable[] = [];
  const updated: Overwrite<ConnectionTable>[] = [];
  const start: string[] = [];
  for (const c of items) {
    const a = action(c.key)!;
    if (!writes(a)) continue;
    const { secretFields, validateConfig } = protocolOf(c.protocol);
    const existing = a.action === 'update' ? rows.connections.find((r) => r.id === a.targetId) : undefined;
    // A bundle's secrets are its inputs; a value an older export held in plain text (a header, a
    // URL's password) is taken as one, and a secret field in its config never is.
    const carried = plaintextCredentials(c.protocol, c.config ?? {});
    const stored = Object.fromEntries(
      Object.entries(carried?.config ?? c.config ?? {}).filter(([k]) => !secretFields.includes(k)),
    );
    const secrets: Record<string, string> = {
      ...(existing?.secrets && existing.protocol === c.protocol
        ? openSecrets(existing.secrets, existing.id, kek)
        : {}),
      ...carried?.secrets,
    };
    for (const input of context.bundleInputs)
      if (input.entity === c.key && inputs[input.key] !== undefined)
        secrets[input.path.replace(/^config\./, '')] = inputs[input.key]!;
    try {
      assertValid(validateConfig, withSecretValues(stored, secrets), 'config');
    } catch (error) {
      context.entityError(c.key, error);
    }
    const desired = options.activate && c.autoStart ? 'running' : 'stopped';
    const values = {
      name: nameOf(a),
      description: c.description ?? '',
      protocol: c.protocol,
      config: JSON.stringify(stored),
      secrets: Object.keys(secrets).length === 0 ? null : sealSecrets(secrets, a.targetId, kek),
      labels: JSON.stringify(c.labels ?? []),
      read_only: c.readOnly ? 1 : 0,
      auto_start: c.autoStart ? 1 : 0,
      version: (existing?.version ?? 0) + 1,
      updated_at: now,
      updated_by: actor.userId,
    };
    const next: ConnectionTable = existing
      ? { ...existing, ...values }
      : {
          id: a.targetId,
          organization_id: organizationId,
          ...values,
          desired_state: desired,
          created_at: now,
          created_by: actor.userId,
        };
    sealed.set(next, secrets);
    if (existing) updated.push({ current: existing, next });
    else created.push(next);
    if (desired === 'running') start.push(a.targetId);
  }
  return { created, updated, start };
}

/** The rows an import writes for the functions of the bundle's connections (bound ones' included). */
function functionRowsOf(items: BundleConnection[], rows: ConnectionRows, context: WriteContext) {
  const { organizationId, actor, now, action, writes } = context;
  const created: ConnectionFunctionTable[] = [];
  const updated: Overwrite<ConnectionFunctionTable>[] = [];
  for (const c of items) {
    const connectionId = action(c.key)!.targetId;
    for (const f of c.functions ?? []) {
      const fa = action(f.key);
      if (!writes(fa)) continue;
      if (!protocolOf(c.protocol).functionTypes.has(f.type))
        throw badRequest(`${f.key}: ${JSON.stringify(f.type)} is not a function type of ${c.protocol}`);
      const existing = fa.action === 'update' ? rows.functions.find((r) => r.id === fa.targetId) : undefined;
      const row = {
        id: fa.targetId,
        organization_id: organizationId,
        connection_id: connectionId,
        name: f.name,
        description: f.description ?? '',
        type: f.type,
        config: JSON.stringify(f.config ?? {}),
        parameters: JSON.stringify(f.parameters ?? []),
        uns: f.uns ? JSON.stringify(f.uns) : null,
        version: (existing?.version ?? 0) + 1,
        created_at: existing?.created_at ?? now,
        created_by: existing ? existing.created_by : actor.userId,
        updated_at: now,
        updated_by: actor.userId,
      };
      if (existing) updated.push({ current: existing, next: row });
      else created.push(row);
    }
  }
  return { created, updated };
}

/**
 * Writes the bundle's connections and their functions through their versioned storage: creates in
 * multi-row inserts, overwrites at their version, the dependency-graph edges, and a version of each
 * (`import`; an overwritten row made before versions gets its version 1 first). A connection's
 * version summary names a changed secret, never its value. Answers the connections to start.
 */
export async function writeConnections(
  items: BundleConnection[],
  rows: ConnectionRows,
  context: WriteContext,
): Promise<{ start: string[] }> {
  const { trx, organizationId, actor, now } = context;
  const kek = context.keyEncryptionKey;
  const stamp = { organizationId, actor, at: now };
  const sealed = new WeakMap<ConnectionTable, Record<string, string>>();
  const written = connectionRowsOf(items, rows, context, sealed);
  const connections = connectionStorage({
    repository: new ConnectionsRepository(trx),
    // A row to write holds the secrets just sealed; only an overwritten row's are opened.
    secretsOf: (row) => sealed.get(row) ?? (row.secrets ? openSecrets(row.secrets, row.id, kek) : {}),
  });
  await importVersions(trx, connections, context, {
    ...stamp,
    created: written.created,
    updated: written.updated.map((u) => ({ ...u, summary: connections.summary!(u.current, u.next) })),
  });
  const functions = functionRowsOf(items, rows, context);
  await importVersions(trx, functionStorage(new FunctionsRepository(trx)), context, {
    ...stamp,
    ...functions,
  });
  return { start: written.start };
}
