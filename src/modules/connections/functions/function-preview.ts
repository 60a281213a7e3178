import { badRequest } from '../../../platform/errors.js';
import type { ConnectionRow } from '../connections/connections.repository.js';
import { assertValid } from '../protocols/protocol-registry.js';
import { functionTypeOf } from './function-definition.js';
import type { ExecutionResult, FunctionExecutor } from './functions.service.js';

/** What a preview runs: a read function's type and config, not saved. */
export interface PreviewBody {
  type: string;
  config: Record<string, unknown>;
}

/**
 * Runs a read function's config once without saving it (the console's register picker shows what a
 * config would read before it is created). Only read types: a write or a subscription is 400, so a
 * preview can never change a device. The config is checked as a create checks it, without placeholders.
 */
export async function previewRead(
  connection: ConnectionRow,
  executor: FunctionExecutor,
  body: PreviewBody,
): Promise<ExecutionResult> {
  const { type, validate } = functionTypeOf(connection.protocol, body.type);
  if (type.direction !== 'read') {
    throw badRequest(
      `type: a preview only reads; ${body.type} is a ${type.direction} function (create it, then execute it)`,
    );
  }
  if (JSON.stringify(body.config).includes('((')) {
    throw badRequest('config: a preview takes values, not ((parameter)) placeholders');
  }
  assertValid(validate, body.config, 'config');
  const problem = type.checkConfig?.(body.config);
  if (problem) throw badRequest(problem);
  return executor.execute(connection, body.type, body.config);
}
