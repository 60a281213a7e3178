import { parseTopicFilter } from '../../uns/topics/topic-filter.js';
import { UnsInputError } from '../../uns/uns-errors.js';
import type { NodeType } from './node-types.js';

/** Statuses a pipeline-finished trigger can watch. */
export const FINISHED_STATUSES = ['completed', 'completed_with_errors', 'failed', 'cancelled'] as const;

/** How many pipeline-finished triggers may follow one another (A starts B starts C...). */
export const MAX_CHAIN_DEPTH = 3;

/**
 * What is wrong with a trigger's topic filter: the rules every topic filter follows (topic-filter.ts:
 * wildcards, segments, characters, lookalikes and mixed scripts), read against its own first segment, as
 * the configured version prefix is not known here; a filter under another prefix matches nothing and is
 * reported when the triggers are loaded.
 */
function filterProblems(filter: string): string | null {
  const first = filter.split('/', 1)[0]!;
  if (first === '+' || first === '#') return 'must begin with the version prefix (as in "v1/#")';
  try {
    parseTopicFilter(filter, first, 'filter');
    return null;
  } catch (error) {
    // The message starts with the field's name, which the problem's path already gives.
    if (error instanceof UnsInputError) return error.message.slice(error.field.length + 1);
    throw error;
  }
}

/** A trigger's run: its output is the execution input (what the trigger recorded). */
const passInput: NodeType['run'] = async (c) => ({ output: c.input ?? null, port: 'out' });

const trigger = (
  t: Pick<NodeType, 'type' | 'title' | 'description' | 'parameters'> & Partial<Pick<NodeType, 'check'>>,
): NodeType => ({
  typeVersion: 1,
  category: 'trigger',
  inputs: [],
  outputs: ['out'],
  sideEffect: 'none',
  testable: true,
  expressionParameters: [],
  run: passInput,
  ...t,
});

/** Trigger node types beyond manual and schedule (the plumbing is in engine/triggers). */
export const TRIGGER_NODE_TYPES: NodeType[] = [
  trigger({
    type: 'trigger.webhook',
    title: 'Webhook',
    description:
      'Starts the pipeline on `POST|PUT|GET /api/v1/engine/webhooks/{pipelineId}/{path}` with the header ' +
      '`X-Webhook-Token` (issued once by `POST /engine/pipelines/{id}/webhook-token`). Answers 202 with the ' +
      'execution id, or with `respond: "finished"` waits for the execution (up to `waitSeconds`). While the ' +
      'organization is in maintenance: 503 with Retry-After, recorded as a skipped execution. Its output is ' +
      '`{ method, path, query, headers, body, receivedAt }`.',
    parameters: {
      type: 'object',
      properties: {
        method: { enum: ['POST', 'PUT', 'GET'], default: 'POST' },
        path: {
          type: 'string',
          maxLength: 200,
          pattern: '^[A-Za-z0-9._~-]+(/[A-Za-z0-9._~-]+)*$',
          description: 'Below the pipeline id; default none.',
        },
        respond: { enum: ['immediately', 'finished'], default: 'immediately' },
        waitSeconds: { type: 'integer', minimum: 1, maximum: 60, default: 30 },
      },
      additionalProperties: false,
    },
    check: (parameters) =>
      typeof parameters.path === 'string' && parameters.path.split('/').some((s) => s === '.' || s === '..')
        ? [{ path: '/path', message: 'must not have a "." or ".." segment' }]
        : [],
  }),
  trigger({
    type: 'trigger.uns',
    title: 'UNS value',
    description:
      'Starts the pipeline once for every value committed to the UNS (HTTP or MQTT publish, connections) ' +
      'whose topic matches the filter (`+` one segment, `#` the rest), exactly once across replicas. Its ' +
      'output is `{ topic, value, quality, timestamp, source }`.',
    parameters: {
      type: 'object',
      properties: {
        filter: { type: 'string', minLength: 3, maxLength: 1024, description: 'e.g. `v1/plant/+/temp`.' },
      },
      required: ['filter'],
      additionalProperties: false,
    },
    check: (parameters) => {
      const problem = filterProblems(String(parameters.filter));
      return problem ? [{ path: '/filter', message: problem }] : [];
    },
  }),
  trigger({
    type: 'trigger.connection',
    title: 'Connection subscription',
    description:
      'Starts the pipeline for every value a subscribe function of a running connection delivers (once ' +
      'committed to the UNS by the replica that runs the connection). Its output is ' +
      '`{ connectionId, functionId, topic, value, quality, timestamp }`.',
    parameters: {
      type: 'object',
      properties: {
        connectionId: { type: 'string', minLength: 1, maxLength: 100 },
        functionId: { type: 'string', minLength: 1, maxLength: 100 },
      },
      required: ['connectionId', 'functionId'],
      additionalProperties: false,
    },
  }),
  trigger({
    type: 'trigger.pipeline',
    title: 'Pipeline finished',
    description:
      'Starts the pipeline when another pipeline of the organization finishes with one of `statuses` ' +
      `(default completed). At most ${MAX_CHAIN_DEPTH} such triggers follow one another; a deeper one is ` +
      'recorded as skipped with the reason `chain_depth`. Its output is ' +
      '`{ pipelineId, executionId, status, error, chainDepth }`.',
    parameters: {
      type: 'object',
      properties: {
        pipelineId: { type: 'string', minLength: 1, maxLength: 100 },
        statuses: {
          type: 'array',
          items: { enum: [...FINISHED_STATUSES] },
          minItems: 1,
          uniqueItems: true,
        },
      },
      required: ['pipelineId'],
      additionalProperties: false,
    },
  }),
];
