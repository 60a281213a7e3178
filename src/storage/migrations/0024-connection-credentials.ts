import type { Kysely } from 'kysely';
import type { MeridianMigration } from '../migrator.js';

// The URL userinfo split as it was when this migration was written (platform/url-credentials.ts): a
// migration keeps the code it ran with, and storage sits below platform.
// scheme://userinfo@rest: the authority ends at the first / ? or #; its last @ ends the userinfo
// (RFC 3986 §3.2; WHATWG URL reads a stray @ in a password the same way).
const USERINFO = /^([a-z][a-z0-9+.-]*:\/\/)([^/?#]*)@/i;

function decoded(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/**
 * Splits the userinfo (`user:password@`) out of an absolute URL, keeping the rest as written (no
 * normalization: the URL a user gave stays recognisable). Null when the URL holds no userinfo.
 */
function splitUrlCredentials(text: string): { url: string; username?: string; password?: string } | null {
  const match = USERINFO.exec(text);
  if (!match) return null;
  const userinfo = match[2]!;
  const colon = userinfo.indexOf(':');
  const user = colon < 0 ? userinfo : userinfo.slice(0, colon);
  const password = colon < 0 ? '' : userinfo.slice(colon + 1);
  return {
    url: match[1]! + text.slice(match[0].length),
    ...(user ? { username: decoded(user) } : {}),
    ...(password ? { password: decoded(password) } : {}),
  };
}

/** Where versions before this one kept credentials in a connection's config in plain text. */
const HEADERS = { rest: 'headers' } as Record<string, string>;
const URLS = { rest: 'baseUrl', mqtt: 'url', opcua: 'endpointUrl' } as Record<string, string>;
const SET = { configured: true };
const REDACTED = '[secret]';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A URL with its password replaced by the audit log's marker (the user is not a secret). */
function redactedUrl(text: string): string {
  const parts = splitUrlCredentials(text);
  if (!parts?.password) return text;
  const at = parts.url.indexOf('://') + 3;
  return `${parts.url.slice(0, at)}${encodeURIComponent(parts.username ?? '')}:${REDACTED}@${parts.url.slice(at)}`;
}

/** Every URL's password and every `headers` value in a logged value replaced by the marker. */
function redactDeep(value: unknown): unknown {
  if (typeof value === 'string') return redactedUrl(value);
  if (Array.isArray(value)) return value.map(redactDeep);
  if (!isObject(value)) return value;
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [k, k === 'headers' && isObject(v) ? REDACTED : redactDeep(v)]),
  );
}

/**
 * A connection version's config as this version records it: each header value and a URL's password
 * as `{configured: true}`, the URL's user in `username` (the connections module seals the values
 * themselves in the row at start-up: only the running server holds the key).
 */
function snapshotConfig(protocol: string, config: Json): Json | null {
  const out = { ...config };
  const headers = HEADERS[protocol];
  const url = URLS[protocol];
  if (headers && isObject(out[headers]))
    out[headers] = Object.fromEntries(Object.keys(out[headers]).map((name) => [name, SET]));
  const parts = url && typeof out[url] === 'string' ? splitUrlCredentials(out[url]) : null;
  if (parts) {
    out[url!] = parts.url;
    if (parts.username !== undefined) out.username = parts.username;
    if (parts.password !== undefined) out.password = SET;
  }
  return JSON.stringify(out) === JSON.stringify(config) ? null : out;
}

/** Whether a bundle holds a connection config with plain-text credentials. */
function bundleHoldsCredentials(bundle: Json): boolean {
  const connections = (isObject(bundle.entities) ? bundle.entities.connections : []) as Json[];
  return (connections ?? []).some(
    (c) => isObject(c) && isObject(c.config) && snapshotConfig(String(c.protocol), c.config) !== null,
  );
}

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was
type Db = Kysely<any>;

async function redactVersions(db: Db): Promise<void> {
  const rows = await db
    .selectFrom('entity_versions')
    .select(['entity_id', 'version', 'snapshot'])
    .where('entity_type', '=', 'connection')
    .execute();
  for (const row of rows) {
    const snapshot = JSON.parse(row.snapshot) as Json;
    if (!isObject(snapshot.config)) continue;
    const config = snapshotConfig(String(snapshot.protocol), snapshot.config);
    if (!config) continue;
    await db
      .updateTable('entity_versions')
      .set({ snapshot: JSON.stringify({ ...snapshot, config }) })
      .where('entity_type', '=', 'connection')
      .where('entity_id', '=', row.entity_id)
      .where('version', '=', row.version)
      .execute();
  }
}

async function redactAudit(db: Db): Promise<void> {
  const rows = await db
    .selectFrom('audit_log')
    .select(['id', 'details'])
    .where('target_type', '=', 'connection')
    .where((eb) => eb.or([eb('details', 'like', '%headers%'), eb('details', 'like', '%://%@%')]))
    .execute();
  for (const row of rows) {
    const details = JSON.parse(row.details) as { changes?: { path: string; from?: unknown; to?: unknown }[] };
    const changes = (details.changes ?? []).map((change) => {
      const underHeaders = change.path.split('/').includes('headers');
      const redact = (v: unknown) => (underHeaders ? REDACTED : redactDeep(v));
      return {
        ...change,
        ...('from' in change ? { from: redact(change.from) } : {}),
        ...('to' in change ? { to: redact(change.to) } : {}),
      };
    });
    const text = JSON.stringify({ ...details, changes });
    if (text !== row.details)
      await db.updateTable('audit_log').set({ details: text }).where('id', '=', row.id).execute();
  }
}

async function redactErrors(db: Db): Promise<void> {
  // An error text may quote a URL with its credentials (fetch refuses such a URL and says which).
  const redactText = (text: string) =>
    text.replace(/([a-z][a-z0-9+.-]*:\/\/[^\s/?#@:]*):[^\s/?#@]+@/gi, `$1:${REDACTED}@`);
  for (const [table, key, column] of [
    ['connection_state_events', 'id', 'error'],
    ['connection_runtime', 'connection_id', 'last_error'],
  ] as const) {
    const rows = await db.selectFrom(table).select([key, column]).where(column, 'like', '%://%@%').execute();
    for (const row of rows) {
      const text = redactText(row[column]);
      if (text !== row[column])
        await db
          .updateTable(table)
          .set({ [column]: text })
          .where(key, '=', row[key])
          .execute();
    }
  }
}

async function redactBundles(db: Db): Promise<void> {
  const holding = (table: string, columns: string[]) =>
    db
      .selectFrom(table)
      .select(columns)
      .where((eb) => eb.or([eb('bundle', 'like', '%"headers"%'), eb('bundle', 'like', '%://%@%')]))
      .execute();
  // Exports are downloads kept for a day: one holding credentials goes (the user exports again).
  for (const row of await holding('dependency_exports', ['id', 'bundle']))
    if (bundleHoldsCredentials(JSON.parse(row.bundle)))
      await db.deleteFrom('dependency_exports').where('id', '=', row.id).execute();
  // A plan not yet executed goes too (validate again); an executed one keeps its report, redacted.
  for (const row of await holding('dependency_import_plans', ['id', 'bundle', 'status'])) {
    const bundle = JSON.parse(row.bundle) as Json;
    if (!bundleHoldsCredentials(bundle)) continue;
    if (row.status !== 'completed') {
      await db.deleteFrom('dependency_import_plans').where('id', '=', row.id).execute();
      continue;
    }
    const entities = bundle.entities as { connections: Json[] };
    entities.connections = entities.connections.map((c) => ({ ...c, config: redactDeep(c.config) }));
    await db
      .updateTable('dependency_import_plans')
      .set({ bundle: JSON.stringify(bundle) })
      .where('id', '=', row.id)
      .execute();
  }
}

/**
 * REST header values and the credentials in a URL (`user:password@` in a REST `baseUrl`, an MQTT
 * `url`, an OPC UA `endpointUrl`) become secrets. This removes their plain text from what records
 * them besides the connection row: connection versions (as `{configured: true}`, the user moved to
 * `username`, as new versions are recorded), the audit log and state history (as `[secret]`), stored
 * exports and import plans. The row itself is sealed by the connections module when the server starts
 * (sealPlaintextCredentials): sealing needs the key-encryption key, which migrations do not hold.
 */
export const connectionCredentials: MeridianMigration = {
  name: '0024-connection-credentials',
  async up(db) {
    await redactVersions(db);
    await redactAudit(db);
    await redactErrors(db);
    await redactBundles(db);
  },
};
