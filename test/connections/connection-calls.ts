import assert from 'node:assert/strict';
import type { TestClient } from '../helpers/http-client.js';

/**
 * The function calls connection suites make, through the client `client()` answers (a suite's server
 * starts in its `before`): create a function (asserting 201, answering its id) and execute one.
 */
export function functionCalls(client: () => TestClient) {
  return {
    async fn(connectionId: string, body: Record<string, unknown>): Promise<string> {
      const res = await client().post(`/api/v1/connections/${connectionId}/functions`, body);
      assert.equal(res.status, 201, res.text);
      return res.body.data.id as string;
    },
    execute: (connectionId: string, functionId: string, body: Record<string, unknown> = {}) =>
      client().post(`/api/v1/connections/${connectionId}/functions/${functionId}/execute`, body),
  };
}
