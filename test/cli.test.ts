import assert from 'node:assert/strict';
import { request } from 'node:http';
import { createServer } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { createTestDatabase, type TestDatabase, testDialects } from './helpers/dialects.js';
import { freePort } from './helpers/free-port.js';
import { runMeridian } from './helpers/process.js';

/** A start under a loaded machine (tsx compiles the sources first) can take longer than the default 30 s. */
const STARTUP_MS = 90_000;

for (const dialect of testDialects()) {
  describe(`the meridian command [${dialect}]`, () => {
    let database: TestDatabase;
    let env: Record<string, string | undefined>;

    before(async () => {
      database = await createTestDatabase(dialect);
      env = {
        MERIDIAN_DATA_DIR: database.dataDir,
        DATABASE_URL: database.databaseUrl,
        MERIDIAN_HTTP_HOST: '127.0.0.1',
        MERIDIAN_MQTT_PORT: '0',
      };
    });
    after(() => database?.drop());

    it('migrate applies the timeline once, then reports the database up to date', async () => {
      const first = runMeridian(['migrate'], env);
      assert.equal(await first.exited, 0);
      assert.match(first.output(), /applied: 0001-identity/);
      const second = runMeridian(['migrate'], env);
      assert.equal(await second.exited, 0);
      assert.match(second.output(), /database is up to date/);
    });

    it('serve prints the generated administrator password once, on first start only', async () => {
      const port = await freePort();
      const first = runMeridian(['serve'], { ...env, MERIDIAN_HTTP_PORT: String(port) });
      await first.waitFor(/Meridian ready in \d+ ms/);
      const password = /password:\s+(\S+)/.exec(first.output())?.[1];
      assert.ok(password && password.length >= 20, 'a generated password is printed');
      const login = await fetch(`http://127.0.0.1:${port}/api/v1/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'admin@localhost', password }),
      });
      assert.equal(login.status, 200);
      first.child.kill('SIGTERM');
      assert.equal(await first.exited, 0);

      const second = runMeridian(['serve'], { ...env, MERIDIAN_HTTP_PORT: String(port) });
      await second.waitFor(/Meridian ready in \d+ ms/);
      assert.doesNotMatch(second.output(), /password:/);
      second.child.kill('SIGTERM');
      assert.equal(await second.exited, 0);
    });

    it('SIGTERM lets an in-flight request finish, then exits 0', async () => {
      const port = await freePort();
      const server = runMeridian(['serve'], { ...env, MERIDIAN_HTTP_PORT: String(port) });
      await server.waitFor(/Meridian ready/);
      const body = JSON.stringify({ email: 'admin@localhost', password: 'wrong-password-here' });
      const response = new Promise<number>((resolve, reject) => {
        const req = request(
          {
            host: '127.0.0.1',
            port,
            method: 'POST',
            path: '/api/v1/auth/login',
            headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
          },
          (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          },
        );
        req.on('error', reject);
        // Half the body now: the request is in flight when the signal arrives.
        req.write(body.slice(0, 10));
        setTimeout(() => {
          server.child.kill('SIGTERM');
          setTimeout(() => req.end(body.slice(10)), 300);
        }, 100);
      });
      assert.equal(await response, 401);
      assert.equal(await server.exited, 0);
      assert.match(server.output(), /shutting down/);
    });

    it('logs JSON lines with a request id and never a credential or a secret query value', async () => {
      const port = await freePort();
      const server = runMeridian(['serve'], {
        ...env,
        MERIDIAN_HTTP_PORT: String(port),
        MERIDIAN_LOG_LEVEL: 'info',
      });
      await server.waitFor(/Meridian ready/);
      const res = await fetch(
        `http://127.0.0.1:${port}/api/v1/organizations?code=code-secret-1&client_secret=cs-secret-2&page=3`,
        {
          headers: {
            authorization: 'Bearer bearer-secret-3',
            cookie: 'meridian_session=cookie-secret-4',
            'x-request-id': 'trace-log-1',
          },
        },
      );
      assert.equal(res.status, 401);
      server.child.kill('SIGTERM');
      await server.exited;
      const lines = server
        .output()
        .split('\n')
        .filter((l) => l.startsWith('{'));
      const forRequest = lines.map((l) => JSON.parse(l)).filter((l) => l.requestId === 'trace-log-1');
      assert.ok(forRequest.length >= 2, 'the request and its response are logged with the request id');
      assert.match(JSON.stringify(forRequest), /page=3/);
      assert.doesNotMatch(server.output(), /code-secret-1|cs-secret-2|bearer-secret-3|cookie-secret-4/);
    });

    it('stops with a message naming the setting when the HTTP port is taken', async () => {
      const blocker = createServer().listen(0, '127.0.0.1');
      await new Promise((resolve) => blocker.once('listening', resolve));
      const address = blocker.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      try {
        const server = runMeridian(['serve'], { ...env, MERIDIAN_HTTP_PORT: String(port) });
        assert.equal(await server.exited, 1);
        assert.match(
          server.output(),
          new RegExp(`HTTP port ${port} is taken: choose another with MERIDIAN_HTTP_PORT`),
        );
      } finally {
        blocker.close();
      }
    });

    it('a start that fails on a taken port writes nothing: the next start is the first and prints the password', async () => {
      const fresh = await createTestDatabase(dialect);
      const blocker = createServer().listen(0, '127.0.0.1');
      await new Promise((resolve) => blocker.once('listening', resolve));
      const address = blocker.address();
      const taken = typeof address === 'object' && address ? address.port : 0;
      const freshEnv = { ...env, MERIDIAN_DATA_DIR: fresh.dataDir, DATABASE_URL: fresh.databaseUrl };
      try {
        const mqttTaken = runMeridian(['serve'], {
          ...freshEnv,
          MERIDIAN_HTTP_PORT: String(await freePort()),
          MERIDIAN_MQTT_PORT: String(taken),
        });
        assert.equal(await mqttTaken.exited, 1);
        assert.match(
          mqttTaken.output(),
          new RegExp(`MQTT port ${taken} is taken: choose another with MERIDIAN_MQTT_PORT`),
        );
        assert.doesNotMatch(mqttTaken.output(), /password:/);
        const httpTaken = runMeridian(['serve'], { ...freshEnv, MERIDIAN_HTTP_PORT: String(taken) });
        assert.equal(await httpTaken.exited, 1);
        assert.match(httpTaken.output(), new RegExp(`HTTP port ${taken} is taken`));
        assert.doesNotMatch(httpTaken.output(), /password:/);
      } finally {
        blocker.close();
      }
      try {
        const port = await freePort();
        const ports = { MERIDIAN_HTTP_PORT: String(port), MERIDIAN_MQTT_PORT: String(await freePort()) };
        const first = runMeridian(['serve'], { ...freshEnv, ...ports });
        await first.waitFor(/Meridian ready in \d+ ms/, STARTUP_MS);
        const password = /password:\s+(\S+)/.exec(first.output())?.[1];
        assert.ok(password && password.length >= 20, 'the generated password is printed');
        first.child.kill('SIGTERM');
        assert.equal(await first.exited, 0);

        // The variable applies to an empty database only: a later start says so, once, and how to reset.
        const later = runMeridian(['serve'], {
          ...freshEnv,
          ...ports,
          MERIDIAN_ADMIN_PASSWORD: 'correct-horse-battery',
        });
        await later.waitFor(/Meridian ready in \d+ ms/, STARTUP_MS);
        const ignored = later
          .output()
          .split('\n')
          .filter((l) => l.includes('MERIDIAN_ADMIN_PASSWORD was ignored'));
        assert.equal(ignored.length, 1);
        assert.match(
          ignored[0] ?? '',
          /npm run meridian -- admin reset-password --email admin@localhost --password/,
        );
        const signIn = (pw: string) =>
          fetch(`http://127.0.0.1:${port}/api/v1/auth/login`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ email: 'admin@localhost', password: pw }),
          });
        assert.equal((await signIn('correct-horse-battery')).status, 401);
        assert.equal((await signIn(password)).status, 200);
        later.child.kill('SIGTERM');
        assert.equal(await later.exited, 0);
      } finally {
        await fresh.drop();
      }
    });

    it('serve on an empty database answers /readyz 200 only once the first administrator can sign in', async () => {
      const fresh = await createTestDatabase(dialect);
      try {
        const port = await freePort();
        const password = 'ready-means-signable-9';
        const server = runMeridian(['serve'], {
          ...env,
          MERIDIAN_DATA_DIR: fresh.dataDir,
          DATABASE_URL: fresh.databaseUrl,
          MERIDIAN_HTTP_PORT: String(port),
          MERIDIAN_ADMIN_PASSWORD: password,
        });
        // As a load balancer or a script does: poll /readyz, sign in at the first 200.
        const deadline = Date.now() + STARTUP_MS;
        const notReady: string[] = [];
        for (;;) {
          assert.ok(Date.now() < deadline, `never ready; output:\n${server.output()}`);
          const ready = await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined);
          if (ready?.status === 200) break;
          if (ready) notReady.push(await ready.text());
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
        const login = await fetch(`http://127.0.0.1:${port}/api/v1/auth/login`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ email: 'admin@localhost', password }),
        });
        assert.equal(login.status, 200, await login.text());
        for (const body of notReady)
          assert.match(body, /"administrator":"the first administrator is being created"/);
        server.child.kill('SIGTERM');
        assert.equal(await server.exited, 0);
      } finally {
        await fresh.drop();
      }
    });

    it('admin create makes a System Administrator who can sign in', async () => {
      const created = runMeridian(
        ['admin', 'create', '--email', 'ops@example.com', '--password', 'ops-password-123'],
        env,
      );
      assert.equal(await created.exited, 0);
      assert.match(created.output(), /created System Administrator ops@example.com/);
      const again = runMeridian(['admin', 'create', '--email', 'OPS@example.com'], env);
      assert.equal(await again.exited, 1);
      assert.match(again.output(), /already exists/);
    });
  });
}

describe('the meridian command without a database', () => {
  it("admin create and reset-password refuse a keyboard walk with zxcvbn's reason and exit 2, before opening storage", async () => {
    for (const args of [
      ['admin', 'create', '--email', 'ops@example.com', '--password', 'qwertyuiopas'],
      ['admin', 'reset-password', '--email', 'ops@example.com', '--password', '1qaz2wsx3edc4rfv'],
    ]) {
      const run = runMeridian(args, { DATABASE_URL: 'postgres://nowhere.invalid/none' });
      assert.equal(await run.exited, 2);
      assert.match(
        run.output(),
        /--password is too easy to guess \(strength 1 of 4, at least 3 needed\): This is (similar to )?a commonly used password/,
      );
    }
  });

  it('reports every configuration problem at once and exits 2', async () => {
    const run = runMeridian(['serve'], {
      MERIDIAN_HTTP_PORT: 'abc',
      MERIDIAN_LOG_LEVEL: 'loud',
      DATABASE_URL: 'nope',
    });
    assert.equal(await run.exited, 2);
    const out = run.output();
    assert.match(out, /MERIDIAN_HTTP_PORT/);
    assert.match(out, /MERIDIAN_LOG_LEVEL/);
    assert.match(out, /DATABASE_URL/);
  });

  it('lists every configuration key with its default', async () => {
    const run = runMeridian(['config'], {});
    assert.equal(await run.exited, 0);
    for (const key of [
      'MERIDIAN_HTTP_PORT',
      'MERIDIAN_MQTT_PORT',
      'DATABASE_URL',
      'MQTT_URL',
      'MERIDIAN_ISSUER',
      'MERIDIAN_UNS_TOPIC_PREFIX',
    ]) {
      assert.match(run.output(), new RegExp(key));
    }
    assert.match(run.output(), /MERIDIAN_ACCESS_TOKEN_TTL\s+3600 seconds .* Range: 60 to 86400\./);
    assert.match(run.output(), /MERIDIAN_CONFIG_FILE\s+\(unset\)\s+A JSON file/);
    assert.match(
      run.output(),
      /MERIDIAN_EGRESS_ALLOW\s+\(unset\)\s+Where connections may go that the egress policy denies/,
    );
    assert.match(run.output(), /MERIDIAN_EGRESS_DENY\s+\(unset\)\s+Where no connection may go/);
  });

  it('refuses an unknown command with exit code 2', async () => {
    const run = runMeridian(['frobnicate'], {});
    assert.equal(await run.exited, 2);
    assert.match(run.output(), /unknown command "frobnicate"/);
  });
});
