import type { MeridianMigration } from '../migrator.js';
import { identity } from './0001-identity.js';

/** The migration timeline, oldest first. Names sort in order and never change once released. */
export const migrations: MeridianMigration[] = [identity];
