import { chmodSync, closeSync, existsSync, mkdirSync, openSync } from 'node:fs';

/** Owner-only modes for what the data directory holds: password hashes, tokens' hashes, key files. */
export const PRIVATE_DIRECTORY_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

/**
 * Creates the data directory owner-only (0700). A directory that already exists keeps its mode: it may be
 * one the operator made for other uses too; the files in it are made private one by one.
 */
export function ensurePrivateDirectory(path: string): void {
  if (existsSync(path)) return;
  mkdirSync(path, { recursive: true, mode: PRIVATE_DIRECTORY_MODE });
  // mkdir's mode passes through the umask; chmod states it exactly.
  chmodSync(path, PRIVATE_DIRECTORY_MODE);
}

/**
 * Makes a database file owner-only (0600) before SQLite opens it: created empty when missing (SQLite
 * takes an empty file as a new database, and gives its -wal and -shm files the same mode), tightened
 * when an older version left it 0644. The -wal and -shm files already there are tightened too.
 */
export function ensurePrivateDatabaseFile(path: string): void {
  closeSync(openSync(path, 'a', PRIVATE_FILE_MODE));
  for (const file of [path, `${path}-wal`, `${path}-shm`, `${path}-journal`]) {
    if (existsSync(file)) chmodSync(file, PRIVATE_FILE_MODE);
  }
}
