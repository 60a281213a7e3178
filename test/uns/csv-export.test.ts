import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { csvField } from '../../src/modules/uns/reading/data.routes.js';
import { testDialects } from '../helpers/dialects.js';
import type { TestClient } from '../helpers/http-client.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { createPat } from './uns-helpers.js';

/** RFC 4180 parser: rows of fields; quoted fields may hold quotes (doubled), commas and line breaks. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const char = text[i]!;
    if (quoted) {
      if (char === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (char === '"') quoted = false;
      else field += char;
    } else if (char === '"') quoted = true;
    else if (char === ',') {
      row.push(field);
      field = '';
    } else if (char === '\r' && text[i + 1] === '\n') {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
      i++;
    } else field += char;
  }
  if (field !== '' || row.length > 0) rows.push([...row, field]);
  return rows;
}

const RANGE = 'from=2026-01-01T00:00:00Z&to=2026-01-02T00:00:00Z';

for (const dialect of testDialects()) {
  describe(`UNS CSV export [${dialect}]`, () => {
    let server: TestServer;
    let api: TestClient;

    before(async () => {
      server = await startTestServer(dialect);
      api = server.client.as({
        token: await createPat(server.admin, ['uns:publish', 'uns:read']),
        org: server.orgId,
      });
    });
    after(() => server?.close());

    const publish = async (topic: string, second: number, value: unknown, source?: string) => {
      const timestamp = `2026-01-01T00:00:0${second}Z`;
      const res = await api.post('/api/v1/uns/data/publish', { topic, value, timestamp, source });
      assert.equal(res.status, 200, res.text);
    };
    const exported = async (topic: string) => {
      const res = await api.get(`/api/v1/uns/data/export?topic=${topic}&${RANGE}`);
      assert.equal(res.status, 200, res.text);
      const rows = parseCsv(res.text);
      assert.deepEqual(rows[0], ['timestamp', 'value', 'quality', 'source', 'receivedAt']);
      return rows.slice(1);
    };

    it('round-trips text with quotes, commas and line breaks', async () => {
      const tricky = 'say "hi", then\r\nleave,\nnow "" ok';
      const source = 'line "4", press,a';
      await publish('v1/csv/round/trip', 1, tricky, source);
      await publish('v1/csv/round/trip', 2, { note: 'a,"b"\nc' });
      const rows = await exported('v1/csv/round/trip');
      assert.equal(rows.length, 2);
      assert.equal(JSON.parse(rows[0]![1]!), tricky);
      assert.equal(rows[0]![3], source);
      assert.deepEqual(JSON.parse(rows[1]![1]!), { note: 'a,"b"\nc' });
      for (const row of rows) assert.equal(row.length, 5);
    });

    it('escapes cells a spreadsheet would run as formulas (OWASP), keeping negative numbers', async () => {
      const formulas = ['=HYPERLINK("http://evil.example","click")', '+1+cmd', '-2+3', '@SUM(A1)'];
      for (const [i, source] of formulas.entries()) {
        await publish(`v1/csv/formula/s${i}`, 1, -5, source);
        const [row] = await exported(`v1/csv/formula/s${i}`);
        assert.equal(row![3], `'${source}`, `source ${JSON.stringify(source)} is prefixed`);
        assert.equal(row![1], '-5', 'a negative number stays a number');
      }
      const res = await api.get(`/api/v1/uns/data/export?topic=v1/csv/formula/s0&${RANGE}`);
      assert.ok(!/(^|,)=HYPERLINK/m.test(res.text), 'no cell starts with =');
    });

    it('escapes a cell starting with tab or carriage return too (no field can carry them yet)', () => {
      assert.equal(csvField('\tx=1'), `"'\tx=1"`);
      assert.equal(csvField('\r=1'), `"'\r=1"`);
      assert.equal(csvField('-1.5e3'), '-1.5e3');
      assert.equal(csvField('plain'), 'plain');
    });
  });
}
