import { ApiError, badRequest } from '../../../platform/errors.js';
import { parseTopicPath } from '../../uns/topics/topic-path.js';
import { checkFunctionConfig, protocolOf } from '../protocols/protocol-registry.js';
import {
  checkDeclarations,
  type FunctionParameter,
  findPlaceholders,
  sampleValue,
  substitute,
} from './placeholders.js';

export interface UnsTarget {
  topic: string;
  intervalMs?: number;
  items?: Record<string, string>;
}

/** The direction of a function type of a protocol, or 400 naming `type`. */
export function functionTypeOf(protocol: string, type: string, field = 'type') {
  const found = protocolOf(protocol).functionTypes.get(type);
  if (!found) {
    const known = [...protocolOf(protocol).functionTypes.keys()].join(', ');
    throw badRequest(
      `${field} '${type.slice(0, 100)}' is not a function type of ${protocol}; one of ${known}`,
    );
  }
  return found;
}

/** Checks a definition: type of the protocol, placeholders, config shape, UNS target; 400 naming the field. */
export function checkDefinition(
  protocol: string,
  def: {
    type: string;
    config: Record<string, unknown>;
    parameters: FunctionParameter[];
    uns: UnsTarget | null;
  },
  topicPrefix: string,
  prefix = '',
): void {
  const { type, validateAll } = functionTypeOf(protocol, def.type, `${prefix}type`);
  try {
    checkDeclarations(def.config, def.parameters);
    for (const field of type.literalFields ?? []) {
      if (findPlaceholders(def.config[field], `config.${field}`).length > 0) {
        throw badRequest(`config.${field} cannot hold a ((placeholder)); pass values through config.params`);
      }
    }
    const sample = Object.fromEntries(def.parameters.map((p) => [p.name, sampleValue(p)]));
    const pointers = new Set(
      findPlaceholders(def.config, '').map(({ path }) =>
        path.replace(/\.([^.[\]]+)/g, '/$1').replace(/\[(\d+)\]/g, '/$1'),
      ),
    );
    checkFunctionConfig(validateAll, substitute(def.config, sample), pointers);
    const problem = type.checkConfig?.(def.config);
    if (problem) throw badRequest(problem);
    if (def.uns) {
      if (type.direction === 'write') throw badRequest('uns is only for read and subscribe functions');
      if (type.direction === 'read' && def.uns.intervalMs === undefined)
        throw badRequest('uns.intervalMs is required for a read function');
      if (def.parameters.some((p) => p.default === undefined)) {
        throw badRequest(
          'uns: every parameter needs a default, since the runtime runs it without parameters',
        );
      }
      const topicError = (field: string, topic: string) => {
        try {
          parseTopicPath(topic, topicPrefix, field);
        } catch (error) {
          throw badRequest(`${field} ${(error as Error).message}`);
        }
      };
      topicError('uns.topic', type.direction === 'subscribe' ? `${def.uns.topic}/x` : def.uns.topic);
      for (const [key, topic] of Object.entries(def.uns.items ?? {})) topicError(`uns.items.${key}`, topic);
    }
  } catch (error) {
    if (prefix && error instanceof ApiError) throw badRequest(`${prefix}${error.message}`);
    throw error;
  }
}
