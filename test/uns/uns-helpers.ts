import type { TestClient } from '../helpers/http-client.js';
import type { TestServer } from '../helpers/test-server.js';

/** Creates a personal access token through the API for the signed-in `client`. */
export async function createPat(
  client: TestClient,
  scopes: string[],
  name = `uns-${Date.now()}`,
): Promise<string> {
  const res = await client.post('/api/v1/oauth2/tokens', { name, scopes, expiresInDays: 30 });
  if (res.status !== 201 && res.status !== 200) throw new Error(`createPat: ${res.status} ${res.text}`);
  return res.body.data.token as string;
}

/** Row counts of the UNS tables: what "nothing stored" is asserted against. */
export async function unsCounts(server: TestServer) {
  // Every committed value in uns_values (the SQLite historian thread stages small commits).
  await server.app.uns.writer.settle();
  const db = server.storage.db;
  const count = async (table: 'uns_topics' | 'uns_values' | 'uns_latest' | 'uns_violations') => {
    const row = await db
      .selectFrom(table)
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirst();
    return Number(row?.n ?? 0);
  };
  return {
    topics: await count('uns_topics'),
    values: await count('uns_values'),
    latest: await count('uns_latest'),
    violations: await count('uns_violations'),
  };
}

let counter = 0;
/** A topic path no other test uses. */
export function uniqueTopic(base = 'v1/test'): string {
  counter++;
  return `${base}/t${process.pid}x${counter}/value`;
}
