import assert from 'node:assert/strict';
import type { TestClient } from './http-client.js';

export const AUDIT = '/api/v1/organizations/audit-log';

/** One entry of the organization's audit log, as the API lists it. */
export interface AuditEntry {
  action: string;
  targetType: string;
  targetId: string;
  reason: string | null;
  actor: { userId: string | null } | null;
  changes: { path: string; from?: unknown; to?: unknown }[];
}

/** The audit entries of one target, oldest first, read by `client` (a client with the audit read scope). */
export async function auditEntriesOf(
  client: TestClient,
  targetType: string,
  id: string,
): Promise<AuditEntry[]> {
  const res = await client.get(`${AUDIT}?targetType=${targetType}&targetId=${id}&limit=100`);
  assert.equal(res.status, 200, res.text);
  return (res.body.data as AuditEntry[]).reverse();
}

/** How many audit entries there are (of one target type, when given). */
export async function auditCount(client: TestClient, targetType?: string): Promise<number> {
  const query = targetType ? `?targetType=${targetType}&limit=1` : '?limit=1';
  return Number((await client.get(`${AUDIT}${query}`)).body.pagination.total);
}
