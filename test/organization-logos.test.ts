import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { testDialects } from './helpers/dialects.js';
import { buildOrganization, signedInMember } from './helpers/factories.js';
import type { TestClient } from './helpers/http-client.js';
import {
  jpegImage,
  pngImage,
  webpExtendedImage,
  webpLosslessImage,
  webpLossyImage,
} from './helpers/images.js';
import { startTestServer, type TestServer } from './helpers/test-server.js';

// A real 1×1 PNG (red pixel); JPEG and WebP images built byte by byte.
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==',
  'base64',
);
const JPEG = jpegImage(64, 32);
const WEBP = webpLossyImage(1, 1);
const FORMATS = [
  ['PNG', pngImage],
  ['JPEG', (w: number, h: number) => jpegImage(w, h)],
  ['lossless WebP', webpLosslessImage],
  ['lossy WebP', webpLossyImage],
  ['extended WebP', webpExtendedImage],
] as const;
const SVG = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"><rect/></svg>');
const HTML = Buffer.from('<!doctype html><html><script>alert(document.cookie)</script></html>');

for (const dialect of testDialects()) {
  describe(`organization logos [${dialect}]`, () => {
    let server: TestServer;
    let viewer: TestClient;
    let logoUrl: string;

    before(async () => {
      server = await startTestServer(dialect);
      viewer = (await signedInMember(server, 'Viewer')).client;
      logoUrl = `/api/v1/organizations/${server.orgId}/logo`;
    });
    after(() => server?.close());

    const upload = (bytes: Buffer, contentType: string, client: TestClient = server.admin, url = logoUrl) =>
      client.request('PUT', url, {
        raw: bytes as unknown as string,
        headers: { 'content-type': contentType },
      });

    it('answers 404 while there is no logo', async () => {
      const res = await viewer.get(logoUrl);
      assert.equal(res.status, 404);
      assert.equal(res.body.error, 'not_found');
    });

    it('stores a PNG and serves it with a fixed type, an ETag, Cache-Control and nosniff; If-None-Match answers 304', async () => {
      const put = await upload(PNG, 'image/png');
      assert.equal(put.status, 200, put.text);
      assert.equal(put.body.data.contentType, 'image/png');
      assert.equal(put.body.data.size, PNG.length);
      const response = await fetch(server.url + logoUrl, {
        headers: { cookie: (viewer as any).credential.cookie, 'x-organization-id': server.orgId },
      });
      assert.equal(response.status, 200);
      assert.equal(response.headers.get('content-type'), 'image/png');
      assert.equal(response.headers.get('x-content-type-options'), 'nosniff');
      assert.match(response.headers.get('cache-control') ?? '', /no-cache/);
      const etag = response.headers.get('etag');
      assert.equal(etag, put.body.data.etag);
      assert.deepEqual(Buffer.from(await response.arrayBuffer()), PNG);
      const again = await viewer.get(logoUrl, { headers: { 'if-none-match': etag! } });
      assert.equal(again.status, 304);
      assert.equal(again.text, '');
    });

    it('recognises the type by the bytes, not the declared type: a JPEG sent as image/png is served as image/jpeg', async () => {
      assert.equal((await upload(JPEG, 'image/png')).body.data.contentType, 'image/jpeg');
      assert.equal((await upload(WEBP, 'application/octet-stream')).body.data.contentType, 'image/webp');
      const res = await viewer.get(logoUrl);
      assert.equal(res.headers.get('content-type'), 'image/webp');
    });

    it('refuses a "PNG" that is really HTML, an SVG, an empty body and JSON with 400, keeping the logo', async () => {
      const kept = (await viewer.get(logoUrl)).headers.get('etag');
      for (const [bytes, type] of [
        [HTML, 'image/png'],
        [SVG, 'image/svg+xml'],
        [SVG, 'image/png'],
        [Buffer.alloc(0), 'image/png'],
      ] as const) {
        const res = await upload(bytes, type);
        assert.equal(res.status, 400, `${type}: ${res.text}`);
        assert.equal(res.body.error, 'bad_request');
        assert.match(res.body.message, /PNG, JPEG or WebP|raw request body/i);
      }
      const json = await server.admin.put(logoUrl, { image: 'png' });
      assert.equal(json.status, 400);
      assert.equal((await viewer.get(logoUrl)).headers.get('etag'), kept);
    });

    for (const [format, image] of FORMATS) {
      it(`${format}: refuses one declaring more than 2048 pixels a side or 1024x1024 in all with 400 naming the limit, keeping the logo`, async () => {
        const kept = (await viewer.get(logoUrl)).headers.get('etag');
        for (const [width, height] of [
          [2049, 16],
          [16, 2049],
          [1025, 1024],
          [2048, 2048],
          [16000, 16000],
        ] as const) {
          const res = await upload(image(width, height), 'image/png');
          assert.equal(res.status, 400, `${width}x${height}: ${res.text}`);
          assert.equal(res.body.error, 'bad_request');
          assert.equal(
            res.body.message,
            `logo is ${width}x${height} pixels; at most 2048 pixels a side and 1048576 pixels in all (1024x1024)`,
          );
        }
        assert.equal((await viewer.get(logoUrl)).headers.get('etag'), kept);
        for (const [width, height] of [
          [1024, 1024],
          [2048, 512],
          [1, 1],
        ] as const) {
          const res = await upload(image(width, height), 'image/png');
          assert.equal(res.status, 200, `${width}x${height}: ${res.text}`);
        }
      });

      it(`${format}: refuses one whose header is truncated or disagrees with the file with 400`, async () => {
        const whole = image(16, 16);
        const truncated = await upload(whole.subarray(0, 18), 'image/png');
        assert.equal(truncated.status, 400, truncated.text);
        assert.match(truncated.body.message, /^the logo cannot be read: .*(truncated|past the end)/);
        // The declared size field of the header's first chunk or segment made to point past the file.
        const lying = Buffer.from(whole);
        if (format === 'PNG') lying.writeUInt32BE(0x7fffffff, 8);
        else if (format === 'JPEG') lying.writeUInt16BE(0xfff0, 4);
        else lying.writeUInt32LE(0x7ffffff0, 4);
        const res = await upload(lying, 'image/png');
        assert.equal(res.status, 400, res.text);
        assert.match(res.body.message, /^the logo cannot be read: .*declares/);
      });
    }

    it('refuses a PNG whose declared size was rewritten without its checksum (30000x30000 relabelled)', async () => {
      const relabelled = Buffer.from(PNG);
      relabelled.writeUInt32BE(30000, 16);
      relabelled.writeUInt32BE(30000, 20);
      const res = await upload(relabelled, 'image/png');
      assert.equal(res.status, 400, res.text);
      assert.equal(
        res.body.message,
        "the logo cannot be read: the PNG's IHDR chunk does not match its checksum",
      );
    });

    it('refuses an image over 512 KiB with 413 and accepts one of exactly 512 KiB', async () => {
      const big = Buffer.concat([PNG, Buffer.alloc(512 * 1024 + 1 - PNG.length)]);
      const res = await upload(big, 'image/png');
      assert.equal(res.status, 413);
      assert.equal(res.body.error, 'payload_too_large');
      const exact = Buffer.concat([PNG, Buffer.alloc(512 * 1024 - PNG.length)]);
      assert.equal((await upload(exact, 'image/png')).status, 200);
    });

    it("refuses a Viewer upload and delete with 403, and another organization's logo with 404", async () => {
      assert.equal((await upload(PNG, 'image/png', viewer)).status, 403);
      assert.equal((await viewer.delete(logoUrl)).status, 403);
      const other = await buildOrganization(server, `Logo other ${dialect}`);
      const owner = (await signedInMember(server, 'Owner')).client;
      const foreign = await upload(PNG, 'image/png', owner, `/api/v1/organizations/${other}/logo`);
      assert.equal(foreign.status, 404);
      assert.equal((await owner.get(`/api/v1/organizations/${other}/logo`)).status, 404);
      // A System Administrator manages any organization's logo.
      assert.equal(
        (await upload(PNG, 'image/png', server.admin, `/api/v1/organizations/${other}/logo`)).status,
        200,
      );
    });

    it('deletes the logo; a second delete answers 404', async () => {
      assert.equal((await server.admin.delete(logoUrl)).status, 204);
      assert.equal((await viewer.get(logoUrl)).status, 404);
      assert.equal((await server.admin.delete(logoUrl)).status, 404);
      const audit = await server.admin.get('/api/v1/organizations/audit-log?action=organization.logo.');
      assert.ok(audit.body.data.some((e: { action: string }) => e.action === 'organization.logo.deleted'));
    });
  });
}
