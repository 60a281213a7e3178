/**
 * What the password policy costs: loading zxcvbn-ts and its dictionaries (once a process, on the first
 * password set), and the main thread's time for one check of typical and of hostile passwords, against an
 * argon2id hash of the same password (what setting a password costs anyway) measured in the same run.
 *
 * Run: npx tsx bench/users/password-strength.bench.ts [rounds]
 */
import { passwordProblem } from '../../src/modules/users/password-policy.js';
import { hashPassword } from '../../src/modules/users/passwords.js';

const rounds = Number(process.argv[2] ?? 5);
const OWNER = { email: 'ada.lovelace@example.com', displayName: 'Ada Lovelace' };
const PASSWORDS = {
  passphrase: 'orbital trajectory by hand',
  'keyboard walk': 'qwertyuiopas',
  generated: 'ENzNaZchorH6DPy9vN4YYczq',
  'own name': 'lovelace.ada@example',
  // Hostile: 256 characters (the API's maximum) of symbols zxcvbn reads as l33t letters.
  'l33t symbols x256': '4@8(6#1!|0$5+7%2'.repeat(16),
  'sequence x256': Array.from({ length: 256 }, (_, i) => String.fromCharCode(33 + ((i * 89) % 90))).join(''),
};

function median(values: number[]): number {
  return [...values].sort((a, b) => a - b)[values.length >> 1]!;
}

async function main() {
  let started = performance.now();
  await passwordProblem('warm-up-password', OWNER);
  console.log(
    `first check, with loading zxcvbn and its dictionaries: ${(performance.now() - started).toFixed(0)} ms`,
  );
  const hashes: number[] = [];
  for (let i = 0; i < rounds; i++) {
    started = performance.now();
    await hashPassword(PASSWORDS.passphrase);
    hashes.push(performance.now() - started);
  }
  const hash = median(hashes);
  console.log(`argon2id hash (baseline, off the main thread): ${hash.toFixed(1)} ms`);
  for (const [name, password] of Object.entries(PASSWORDS)) {
    const times: number[] = [];
    let verdict: string | null = null;
    for (let i = 0; i < rounds; i++) {
      started = performance.now();
      verdict = await passwordProblem(password, OWNER);
      times.push(performance.now() - started);
    }
    const check = median(times);
    console.log(
      `${name.padEnd(20)} ${check.toFixed(1).padStart(7)} ms  ${(check / hash).toFixed(2)}x the hash  ${verdict === null ? 'accepted' : 'refused'}`,
    );
  }
}

await main();
