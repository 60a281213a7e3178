import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import SQLite from 'better-sqlite3';
import { skipOutsideCi } from '../helpers/ci.js';
import { freePort } from '../helpers/free-port.js';
import { runMeridian } from '../helpers/process.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

/**
 * The embedded store on a real small filesystem (a 4 MiB tmpfs): when the disk is full or read-only,
 * writes get a clear 503, reads keep working, nothing is corrupted, and service resumes by itself.
 * Needs root for mount; CI runs as root, elsewhere the suite says why it cannot run.
 */
const mountPoint = mkdtempSync(join(tmpdir(), 'meridian-tinyfs-'));
let mounted = false;
let mountError = '';
try {
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=4M', 'tmpfs', mountPoint], { stdio: 'ignore' });
  mounted = true;
} catch (error) {
  mountError = (error as Error).message;
}

describe('embedded store faults [sqlite]', {
  skip: mounted ? false : skipOutsideCi(`it needs root to mount a small tmpfs (${mountError})`),
}, () => {
  let server: TestServer | undefined;
  let acknowledged = 0;
  const dataDir = join(mountPoint, 'data');
  const filler = join(mountPoint, 'filler');
  let n = 0;
  const createUser = async () => {
    const res = await server!.admin.post('/api/v1/admin/users', {
      email: `fault${++n}@example.com`,
      displayName: `Fault ${n}`,
      password: 'fault-password-123',
    });
    if (res.status === 201) acknowledged++;
    return res;
  };

  before(async () => {
    mkdirSync(dataDir);
    server = await startTestServer('sqlite', { config: { dataDir } });
  });
  after(async () => {
    await server?.close();
    execFileSync('umount', [mountPoint]);
    rmSync(mountPoint, { recursive: true, force: true });
  });

  it('answers 503 "storage is full" to writes on a full disk, keeps serving reads, and recovers', async () => {
    assert.equal((await createUser()).status, 201);
    // Fill what is left, then write until SQLite cannot grow its WAL. Writes first fill the WAL's space
    // already on disk (the checkpoint thread lets SQLite reuse it) until a checkpoint needs the database
    // file to grow and cannot: a few hundred small writes at most on this filesystem.
    try {
      writeFileSync(filler, Buffer.alloc(8 * 1024 * 1024));
    } catch {
      // ENOSPC: the filler took every free byte
    }
    let refused: Awaited<ReturnType<typeof createUser>> | undefined;
    for (let i = 0; i < 1000 && !refused; i++) {
      const res = await createUser();
      if (res.status !== 201) refused = res;
    }
    assert.ok(refused, 'a write is refused once the disk is full');
    assert.equal(refused.status, 503);
    assert.deepEqual(Object.keys(refused.body), ['error', 'message']);
    assert.equal(refused.body.error, 'unavailable');
    assert.match(refused.body.message, /full/);
    assert.ok(refused.headers.get('retry-after'));
    assert.equal((await server!.admin.get('/api/v1/admin/users?limit=1')).status, 200, 'reads still work');

    rmSync(filler);
    assert.equal((await createUser()).status, 201, 'writes resume once space is freed');
  });

  it('refuses to start on a read-only data directory with a message naming the setting, and starts once writable', async () => {
    await server?.close();
    server = undefined;
    execFileSync('mount', ['-o', 'remount,ro', mountPoint]);
    try {
      const env = { MERIDIAN_DATA_DIR: dataDir, MERIDIAN_HTTP_HOST: '127.0.0.1', MERIDIAN_MQTT_PORT: '0' };
      const refused = runMeridian(['serve'], { ...env, MERIDIAN_HTTP_PORT: String(await freePort()) });
      assert.equal(await refused.exited, 1);
      assert.match(refused.output(), /cannot open the SQLite database .*MERIDIAN_DATA_DIR/);
    } finally {
      execFileSync('mount', ['-o', 'remount,rw', mountPoint]);
    }
    const port = await freePort();
    const started = runMeridian(['serve'], {
      MERIDIAN_DATA_DIR: dataDir,
      MERIDIAN_HTTP_HOST: '127.0.0.1',
      MERIDIAN_MQTT_PORT: '0',
      MERIDIAN_HTTP_PORT: String(port),
    });
    await started.waitFor(/Meridian ready/);
    started.child.kill('SIGTERM');
    assert.equal(await started.exited, 0);
  });

  it('leaves the database file consistent, with every acknowledged write in it', () => {
    const db = new SQLite(join(dataDir, 'meridian.db'), { readonly: true });
    try {
      assert.equal(db.pragma('integrity_check', { simple: true }), 'ok');
      const row = db.prepare("select count(*) as n from users where email like 'fault%'").get() as {
        n: number;
      };
      assert.equal(row.n, acknowledged, 'every user answered 201 is in the file');
    } finally {
      db.close();
    }
  });
});
