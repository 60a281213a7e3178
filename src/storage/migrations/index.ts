import type { MeridianMigration } from '../migrator.js';
import { identity } from './0001-identity.js';
import { oauth2 } from './0002-oauth2.js';
import { uns } from './0003-uns.js';
import { clientOrganizations } from './0004-client-organizations.js';
import { unsBrokerSecret } from './0005-uns-broker-secret.js';
import { connections } from './0006-connections.js';
import { entityVersions } from './0007-entity-versions.js';
import { models } from './0008-models.js';
import { organizationSettings } from './0009-organization-settings.js';
import { dashboards } from './0010-dashboards.js';
import { pipelines } from './0011-pipelines.js';
import { unsRollups } from './0012-uns-rollups.js';
import { dependencyEdges } from './0013-dependency-edges.js';
import { dependencyBundles } from './0014-dependency-bundles.js';
import { webhookTokens } from './0015-webhook-tokens.js';
import { nodeState } from './0016-node-state.js';
import { executionFlow } from './0017-execution-flow.js';
import { unsRollupJob } from './0019-uns-rollup-job.js';
import { connectionVersions } from './0020-connection-versions.js';
import { engineClaimOrder } from './0021-engine-claim-order.js';
import { engineDefinitions } from './0022-engine-definitions.js';
import { engineActiveIndexes } from './0023-engine-active-indexes.js';
import { connectionCredentials } from './0024-connection-credentials.js';
import { webhookSigning } from './0025-webhook-signing.js';
import { unsSegments } from './0026-uns-segments.js';
import { namesIgnoreCase } from './0028-names-ignore-case.js';
import { passwordChangedAt } from './0029-password-changed-at.js';
import { idempotencyKeysOnly } from './0030-idempotency-keys-only.js';

/** The migration timeline, oldest first. Names sort in order and never change once released. */
export const migrations: MeridianMigration[] = [
  identity,
  oauth2,
  uns,
  clientOrganizations,
  unsBrokerSecret,
  connections,
  entityVersions,
  models,
  organizationSettings,
  dashboards,
  pipelines,
  unsRollups,
  dependencyEdges,
  dependencyBundles,
  webhookTokens,
  nodeState,
  executionFlow,
  unsRollupJob,
  connectionVersions,
  engineClaimOrder,
  engineDefinitions,
  engineActiveIndexes,
  connectionCredentials,
  webhookSigning,
  unsSegments,
  namesIgnoreCase,
  passwordChangedAt,
  idempotencyKeysOnly,
];
