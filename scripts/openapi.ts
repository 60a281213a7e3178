/**
 * Writes the OpenAPI document generated from the route schemas to openapi.json, or with --check fails
 * when the committed file differs from what the code generates (CI runs the check).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config/load-config.js';
import { openStorage } from '../src/storage/database.js';
import { migrateToLatest } from '../src/storage/migrator.js';

const FILE = 'openapi.json';

async function generate(): Promise<string> {
  const dataDir = mkdtempSync(join(tmpdir(), 'meridian-openapi-'));
  // A fixed issuer keeps the document independent of the machine that generates it.
  const config = loadConfig(
    {},
    { dataDir, logLevel: 'silent', issuer: 'http://localhost:8080', mqttPort: 0 },
  );
  const storage = openStorage({ dataDir, sqliteFile: ':memory:' });
  try {
    await migrateToLatest(storage);
    const app = await buildApp({ config, storage });
    await app.ready();
    const document = app.swagger();
    await app.close();
    return `${JSON.stringify(document, null, 2)}\n`;
  } finally {
    await storage.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const generated = await generate();
if (process.argv.includes('--check')) {
  let committed = '';
  try {
    committed = readFileSync(FILE, 'utf8');
  } catch {
    // missing file: reported below
  }
  if (committed !== generated) {
    console.error(
      `${FILE} is out of date with the route schemas: run \`npm run openapi\` and commit the result.`,
    );
    process.exit(1);
  }
  console.log(`${FILE} is current`);
} else {
  writeFileSync(FILE, generated);
  console.log(`wrote ${FILE}`);
}
