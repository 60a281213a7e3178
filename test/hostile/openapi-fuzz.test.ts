import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { testDialects } from '../helpers/dialects.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { contentType, pathParam, queryString, type WireBody, wireBodyFor } from './request-arbitraries.js';
import { stateDigest } from './state-digest.js';

/**
 * Property: across every operation of the OpenAPI document, generated hostile requests never get a 5xx,
 * every refusal has the documented shape, and a batch of refused requests leaves the database as it was.
 * MERIDIAN_FUZZ_REQUESTS sets the count per dialect (default 20,000: 40,000 over both); MERIDIAN_FUZZ_SEED
 * replays a run. The seed changes with every run, so each CI run tries requests no run before tried; at
 * 50,000 a dialect this file took 553 s of a 39-minute suite (the longest file by six times), and a
 * deeper search is `MERIDIAN_FUZZ_REQUESTS=200000 node scripts/run-tests.mjs openapi-fuzz`.
 */
const REQUESTS = Number(process.env.MERIDIAN_FUZZ_REQUESTS ?? 20_000);
const SEED = Number(process.env.MERIDIAN_FUZZ_SEED ?? Date.now() % 2 ** 31);
const BATCH = 200;
const CONCURRENCY = 16;
// OAuth2 protocol endpoints answer RFC 6749 / 6750 bodies; authorize may answer an HTML page.
const PROTOCOL = /^\/api\/v1\/oauth2\/(authorize|token|introspect|revoke|userinfo)\b|^\/\.well-known\//;
const SAFE = new Set(['GET', 'HEAD', 'OPTIONS']);

interface Operation {
  method: string;
  path: string;
  bodySchema: { properties?: Record<string, unknown> } | undefined;
}

type CredentialKind = 'admin' | 'none' | 'garbage-bearer' | 'foreign-org';

interface GeneratedRequest {
  operation: Operation;
  credential: CredentialKind;
  params: string[];
  query: string;
  body: WireBody;
  contentType: string;
}

function operationsOf(document: {
  paths: Record<string, Record<string, { requestBody?: any }>>;
}): Operation[] {
  const operations: Operation[] = [];
  for (const [path, methods] of Object.entries(document.paths)) {
    if (path.startsWith('/api/docs')) continue;
    for (const [method, op] of Object.entries(methods)) {
      operations.push({
        method: method.toUpperCase(),
        path,
        bodySchema: op.requestBody?.content?.['application/json']?.schema,
      });
    }
  }
  return operations;
}

function requestArbitrary(operations: Operation[]): fc.Arbitrary<GeneratedRequest> {
  return fc.constantFrom(...operations).chain((operation) =>
    fc.record({
      operation: fc.constant(operation),
      credential: fc.constantFrom<CredentialKind>(
        'admin',
        'admin',
        'admin',
        'admin',
        'admin',
        'none',
        'garbage-bearer',
        'foreign-org',
      ),
      params: fc.array(pathParam, { minLength: 4, maxLength: 4 }),
      query: queryString,
      body: wireBodyFor(operation.bodySchema),
      contentType,
    }),
  );
}

function assertDocumentedShape(req: GeneratedRequest, status: number, type: string, text: string): void {
  const label = `${req.operation.method} ${req.operation.path} (${req.credential}) → ${status}: ${text.slice(0, 300)}`;
  assert.ok(status < 500, `no 5xx: ${label}`);
  if (status < 400) return;
  if (PROTOCOL.test(req.operation.path)) {
    if (type.includes('text/html')) return;
    const body = JSON.parse(text);
    assert.ok(typeof body.error === 'string' || typeof body.message === 'string', `RFC error body: ${label}`);
    return;
  }
  assert.match(type, /application\/json/, `JSON error body: ${label}`);
  const body = JSON.parse(text);
  if (status === 401) {
    assert.deepEqual(Object.keys(body), ['message'], `401 is {message}: ${label}`);
    return;
  }
  assert.equal(typeof body.error, 'string', `error member: ${label}`);
  assert.equal(typeof body.message, 'string', `message member: ${label}`);
  assert.ok(body.message.length < 2000, `message stays short: ${label}`);
}

for (const dialect of testDialects()) {
  describe(`hostile input over every route [${dialect}]`, () => {
    let server: TestServer;
    let credentials: Record<CredentialKind, Record<string, string>>;

    before(async () => {
      // Without the historian's compaction job: it may move rows into segments (and takes its lease) in
      // the middle of a batch, a change of state no request made.
      server = await startTestServer(dialect, { config: { loginMaxFailures: 1000, unsCompress: false } });
      const admin = (server.admin as unknown as { credential: { cookie: string; csrfToken: string } })
        .credential;
      const session = { cookie: admin.cookie, 'x-csrf-token': admin.csrfToken };
      credentials = {
        admin: { ...session, 'x-organization-id': server.orgId },
        none: { 'x-organization-id': server.orgId },
        'garbage-bearer': {
          authorization: 'Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.',
          'x-organization-id': server.orgId,
        },
        'foreign-org': { ...session, 'x-organization-id': '00000000-0000-4000-8000-000000000001' },
      };
    });
    after(() => server?.close());

    it(`answers ${REQUESTS} generated requests without a 5xx, in the documented shapes, changing nothing when refusing`, async () => {
      const document = (await server.client.get('/api/docs/json')).body;
      // Signing out would end the session the rest of the run uses; logout is fuzzed without credentials.
      const operations = operationsOf(document);
      assert.ok(operations.length >= 20, 'the document lists the operations');
      const requests = fc.sample(requestArbitrary(operations), { numRuns: REQUESTS, seed: SEED });
      console.log(`fuzzing ${operations.length} operations with ${REQUESTS} requests, seed ${SEED}`);
      const counts = new Map<number, number>();

      for (let start = 0; start < requests.length; start += BATCH) {
        const batch = requests.slice(start, start + BATCH);
        const before = await stateDigest(server.storage);
        let changedSomething = false;
        let next = 0;
        const worker = async () => {
          while (next < batch.length) {
            const req = batch[next++]!;
            const status = await send(server.url, req, credentials);
            counts.set(status.status, (counts.get(status.status) ?? 0) + 1);
            assertDocumentedShape(req, status.status, status.type, status.text);
            if (status.status < 400 && !SAFE.has(req.operation.method)) changedSomething = true;
          }
        };
        await Promise.all(Array.from({ length: CONCURRENCY }, worker));
        if (!changedSomething) {
          assert.equal(
            await stateDigest(server.storage),
            before,
            `a batch of refused requests changed state (seed ${SEED}, from ${start})`,
          );
        }
      }
      console.log(`statuses: ${JSON.stringify(Object.fromEntries([...counts].sort((a, b) => a[0] - b[0])))}`);
      assert.ok((counts.get(400) ?? 0) > REQUESTS / 20, 'a good share of requests reach input validation');
    });
  });
}

async function send(
  baseUrl: string,
  req: GeneratedRequest,
  credentials: Record<CredentialKind, Record<string, string>>,
) {
  let params = 0;
  const path = req.operation.path.replace(/\{[^}]+\}/g, () => encodePathSegment(req.params[params++ % 4]!));
  const isLogout = req.operation.path === '/api/v1/auth/logout';
  const headers: Record<string, string> = { ...credentials[isLogout ? 'none' : req.credential] };
  let body: string | Uint8Array | undefined;
  if (!SAFE.has(req.operation.method)) {
    if (req.body.kind === 'json') body = JSON.stringify(req.body.value);
    else if (req.body.kind === 'bytes') body = req.body.bytes;
    if (body !== undefined && req.contentType) headers['content-type'] = req.contentType;
  }
  let response: Response;
  try {
    response = await fetch(baseUrl + path + req.query, {
      method: req.operation.method,
      headers,
      body,
      redirect: 'manual',
    });
  } catch (error) {
    const size = typeof body === 'string' ? body.length : (body?.byteLength ?? 0);
    const cause = (error as Error & { cause?: Error }).cause?.message ?? String(error);
    throw new Error(
      `${req.operation.method} ${path.slice(0, 200)} (${req.credential}, ${req.contentType || 'no content type'}, ${size} bytes): ${cause}`,
    );
  }
  const type = response.headers.get('content-type') ?? '';
  // An accepted live stream never ends by itself: its 200 and content type are the answer.
  if (type.startsWith('text/event-stream')) {
    await response.body?.cancel();
    return { status: response.status, type, text: '' };
  }
  return { status: response.status, type, text: await response.text() };
}

/** encodeURIComponent, with lone surrogates (which it refuses) sent as their raw percent-encoded bytes. */
function encodePathSegment(value: string): string {
  try {
    return encodeURIComponent(value);
  } catch {
    return [...value]
      .map((ch) => {
        try {
          return encodeURIComponent(ch);
        } catch {
          return '%ED%A0%80';
        }
      })
      .join('');
  }
}
