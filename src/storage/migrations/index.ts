import type { MeridianMigration } from '../migrator.js';
import { identity } from './0001-identity.js';
import { oauth2 } from './0002-oauth2.js';
import { uns } from './0003-uns.js';
import { clientOrganizations } from './0004-client-organizations.js';
import { entityVersions } from './0007-entity-versions.js';

/** The migration timeline, oldest first. Names sort in order and never change once released. */
export const migrations: MeridianMigration[] = [identity, oauth2, uns, clientOrganizations, entityVersions];
