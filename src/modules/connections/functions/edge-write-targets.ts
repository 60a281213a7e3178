/**
 * The Sparkplug edge node's write targets that name a connection function (organization setting
 * `sparkplug.edgeNode.writes`, see uns/mqtt/sparkplug/edge-writes.ts): checked when the setting is saved
 * (400 naming the field) and run, for each NCMD/DCMD write, as executing the function with
 * `confirmWrites: true` runs it: refused on a read-only connection, never retried.
 */
import { ApiError, badRequest } from '../../../platform/errors.js';
import type { EdgeWriteTarget, FunctionWrite } from '../../uns/mqtt/sparkplug/edge-writes.js';
import { parseTopicPath } from '../../uns/topics/topic-path.js';
import { UnsInputError } from '../../uns/uns-errors.js';
import { functionTypeOf } from './function-definition.js';
import type { FunctionsService } from './functions.service.js';
import type { FunctionParameter } from './placeholders.js';

/** The write function a target names and the parameter that takes the value; throws ApiError when it is none. */
async function writeFunctionOf(
  functions: FunctionsService,
  organizationId: string,
  target: { connectionId: string; functionId: string; parameter: string },
) {
  const { connection, row } = await functions.get(organizationId, target.connectionId, target.functionId);
  const { type } = functionTypeOf(connection.protocol, row.type);
  if (type.direction !== 'write')
    throw badRequest(`function '${row.name}' is a ${type.direction} function (${row.type}), not a write`);
  const parameter = (JSON.parse(row.parameters) as FunctionParameter[]).find(
    (p) => p.name === target.parameter,
  );
  if (!parameter)
    throw badRequest(`function '${row.name}' has no parameter '${target.parameter}' to take the value`);
  return { row, parameter };
}

/** Whether a value has the type a function parameter declares. */
const fits = (value: unknown, type: FunctionParameter['type']) =>
  type === 'integer' ? Number.isInteger(value) : typeof value === type;

/** Runs the write function of a target with the command's value, confirmed (as an execute with confirmWrites). */
export function edgeFunctionWrite(functions: FunctionsService): FunctionWrite {
  return async (organizationId, target, value) => {
    const { row, parameter } = await writeFunctionOf(functions, organizationId, target);
    if (!fits(value, parameter.type))
      throw badRequest(
        `the value is ${typeof value}; parameter '${parameter.name}' of function '${row.name}' takes ${parameter.type}`,
      );
    return functions.execute(organizationId, target.connectionId, target.functionId, {
      parameters: { [parameter.name]: value },
      confirmWrites: true,
    });
  };
}

/**
 * Checks the write targets of an edge node setting: a device the setting has, a valid UNS topic, or a
 * write function of a connection of the organization with the parameter named. 400 naming the field.
 */
export async function checkEdgeWriteTargets(
  functions: FunctionsService,
  organizationId: string,
  edgeNode: { devices: { deviceId: string }[]; writes?: EdgeWriteTarget[] } | null,
  topicPrefix: string,
): Promise<void> {
  const devices = new Set(edgeNode?.devices.map((d) => d.deviceId));
  for (const [i, target] of (edgeNode?.writes ?? []).entries()) {
    const field = `sparkplug.edgeNode.writes[${i}]`;
    if (target.deviceId !== undefined && !devices.has(target.deviceId))
      throw badRequest(`${field}.deviceId '${target.deviceId}' is not one of sparkplug.edgeNode.devices`);
    if ('topic' in target) {
      try {
        parseTopicPath(target.topic, topicPrefix, `${field}.topic`);
      } catch (error) {
        if (error instanceof UnsInputError) throw badRequest(error.message);
        throw error;
      }
      continue;
    }
    try {
      await writeFunctionOf(functions, organizationId, { ...target, parameter: target.parameter ?? 'value' });
    } catch (error) {
      if (error instanceof ApiError) throw badRequest(`${field}: ${error.message}`);
      throw error;
    }
  }
}
