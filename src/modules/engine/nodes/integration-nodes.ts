import { MAX_TIMESTAMP_US, MIN_TIMESTAMP_US, parseRfc3339Micros } from '../../uns/rfc3339.js';
import {
  evaluateJsonata,
  type NodeContext,
  NodeError,
  type NodeType,
  resolveTemplates,
} from './node-types.js';
import { servicesOf } from './stateful-nodes.js';

// Node types that reach other modules: connection function calls, UNS reads, runs of other pipelines.
// Values of node-types are used only inside `run` (node-types lists these types; see data-nodes.ts).

const reference = (what: string) => ({
  type: 'string',
  minLength: 1,
  maxLength: 200,
  description: `The ${what} id, or \`{{ expr }}\`.`,
});

/** `{{ expr }}` in a parameter: checked when the node runs, not when it is saved. */
const isTemplate = (value: unknown) => typeof value === 'string' && /^\s*\{\{[\s\S]*\}\}\s*$/.test(value);

async function stringParameter(c: NodeContext, name: string): Promise<string> {
  const value = await resolveTemplates(c.parameters[name], c);
  if (typeof value !== 'string' || value.length === 0)
    throw new NodeError('bad_parameter', `${name}: must evaluate to a non-empty string`);
  return value;
}

const connectionCall: NodeType = {
  type: 'connection.call',
  typeVersion: 1,
  category: 'integration',
  title: 'Connection function call',
  description:
    'Runs a saved function of a connection (its `((parameters))` from `parameters`, whose values may be `{{ expr }}`) and outputs `{ value, quality, timestamp, durationMs }`. A function that writes needs `confirmWrites: true` here and a connection that is not read-only; its node run is marked before the write, so that it is never run again by itself after a crash. A device error fails the node.',
  parameters: {
    type: 'object',
    properties: {
      connectionId: reference('connection'),
      functionId: reference('function'),
      parameters: { type: 'object', maxProperties: 100, description: 'Values of the function parameters.' },
      confirmWrites: { type: 'boolean', description: 'Required when the function writes to the device.' },
    },
    required: ['connectionId', 'functionId'],
    additionalProperties: false,
  },
  inputs: ['in'],
  outputs: ['out'],
  // A read by default; a write function marks its run as writing (beforeDeviceWrite) before it writes.
  sideEffect: 'reads-device',
  testable: true,
  expressionParameters: [],
  // A dynamic reference may name a write: assumed to. A function not found writes nothing (the call fails).
  sideEffectOf: async (p, { organizationId, services }) => {
    if (isTemplate(p.connectionId) || isTemplate(p.functionId) || !services) return 'writes-device';
    try {
      const direction = await services.functionDirection(
        organizationId,
        String(p.connectionId),
        String(p.functionId),
      );
      return direction === 'write' ? 'writes-device' : 'reads-device';
    } catch (error) {
      if (error instanceof NodeError && error.code === 'not_found') return 'reads-device';
      throw error;
    }
  },
  run: async (c) => {
    const services = servicesOf(c);
    const parameters = (await resolveTemplates(c.parameters.parameters ?? {}, c)) as Record<string, unknown>;
    const { direction, result } = await services.callFunction(
      c.organizationId,
      {
        connectionId: await stringParameter(c, 'connectionId'),
        functionId: await stringParameter(c, 'functionId'),
        parameters,
        confirmWrites: c.parameters.confirmWrites === true,
      },
      async () => c.beforeDeviceWrite?.(),
    );
    if (!result.success)
      throw new NodeError('device_error', `the ${direction} failed: ${result.error ?? 'no answer'}`);
    const { value, quality, timestamp, durationMs } = result;
    return { output: { value: value ?? null, quality, timestamp, durationMs }, port: 'out' };
  },
};

const DURATION = /^([1-9]\d{0,8})(ms|s|m|h|d)$/;
const UNIT_US: Record<string, number> = { ms: 1e3, s: 1e6, m: 6e7, h: 3.6e9, d: 8.64e10 };
const MAX_BUCKETS = 100_000;

const durationUs = (text: unknown) => {
  const match = typeof text === 'string' ? DURATION.exec(text) : null;
  return match ? Number(match[1]) * UNIT_US[match[2]!]! : 0;
};

const duration = (description: string) => ({
  type: 'string',
  pattern: '^[1-9][0-9]{0,8}(ms|s|m|h|d)$',
  description: `${description} (e.g. 500ms, 10s, 15m, 1h, 7d).`,
});

const time = (description: string) => ({
  type: 'string',
  minLength: 1,
  maxLength: 200,
  description: `${description}: RFC 3339, or \`{{ expr }}\`.`,
});

const HISTORY_ONLY = ['from', 'to', 'last', 'limit', 'order', 'aggregate'];

const unsFetch: NodeType = {
  type: 'uns.fetch',
  typeVersion: 1,
  category: 'uns',
  title: 'UNS fetch',
  description:
    "Reads a topic of the organization's UNS. `latest`: its latest `{ topic, value, quality, timestamp, source, receivedAt }`. " +
    '`history`: `{ topic, values, count, more }` in a range (`from`/`to`, or the `last` duration up to now), at most `limit` values; ' +
    'with `aggregate.interval` numeric values in time buckets (`{ topic, buckets }` with count, avg, min, max, first, last). ' +
    'A topic without values leaves by `empty`.',
  parameters: {
    type: 'object',
    properties: {
      topic: { type: 'string', minLength: 1, maxLength: 1024, description: 'A topic path, or `{{ expr }}`.' },
      mode: { enum: ['latest', 'history'], default: 'latest' },
      from: time('Inclusive start'),
      to: time('Exclusive end'),
      last: duration('The range ending now'),
      limit: { type: 'integer', minimum: 1, maximum: 10_000, default: 1000 },
      order: { enum: ['asc', 'desc'], default: 'asc' },
      aggregate: {
        type: 'object',
        properties: { interval: duration('Bucket width') },
        required: ['interval'],
        additionalProperties: false,
      },
    },
    required: ['topic'],
    additionalProperties: false,
  },
  inputs: ['in'],
  outputs: ['out', 'empty'],
  sideEffect: 'none',
  testable: true,
  expressionParameters: [],
  check: (p) => {
    const problems: { path: string; message: string }[] = [];
    if ((p.mode ?? 'latest') === 'latest')
      for (const name of HISTORY_ONLY)
        if (name in p) problems.push({ path: `/${name}`, message: 'applies to mode history only' });
    if ('last' in p && 'from' in p) problems.push({ path: '/last', message: 'and from exclude each other' });
    for (const name of ['from', 'to'])
      if (typeof p[name] === 'string' && !isTemplate(p[name]))
        try {
          parseRfc3339Micros(p[name], name);
        } catch (error) {
          problems.push({ path: `/${name}`, message: (error as Error).message });
        }
    if (p.aggregate !== undefined && !('from' in p) && !('last' in p))
      problems.push({ path: '/aggregate', message: 'needs a bounded range: from or last' });
    return problems;
  },
  run: async (c) => {
    const services = servicesOf(c);
    const topic = await stringParameter(c, 'topic');
    if ((c.parameters.mode ?? 'latest') === 'latest') {
      const latest = await services.latest(c.organizationId, topic);
      return latest ? { output: latest, port: 'out' } : { output: { topic, value: null }, port: 'empty' };
    }
    const nowUs = services.now() * 1000;
    const timeOf = async (name: 'from' | 'to', fallback: number) => {
      if (c.parameters[name] === undefined) return fallback;
      const text = await resolveTemplates(c.parameters[name], c);
      try {
        return parseRfc3339Micros(text, name);
      } catch (error) {
        throw new NodeError('bad_parameter', (error as Error).message);
      }
    };
    const last = durationUs(c.parameters.last);
    const fromUs = last > 0 ? nowUs - last : await timeOf('from', MIN_TIMESTAMP_US);
    const toUs = last > 0 ? nowUs + 1 : await timeOf('to', MAX_TIMESTAMP_US);
    if (toUs <= fromUs) throw new NodeError('bad_parameter', 'to: must be later than from');
    const aggregate = c.parameters.aggregate as { interval: string } | undefined;
    if (aggregate) {
      const widthUs = durationUs(aggregate.interval);
      if ((toUs - fromUs) / widthUs > MAX_BUCKETS)
        throw new NodeError('bad_parameter', `aggregate.interval: at most ${MAX_BUCKETS} buckets per range`);
      const result = await services.aggregate(c.organizationId, topic, { fromUs, toUs, widthUs });
      return { output: result, port: result.buckets.length > 0 ? 'out' : 'empty' };
    }
    const {
      topic: path,
      values,
      more,
    } = await services.history(c.organizationId, topic, {
      fromUs,
      toUs,
      limit: (c.parameters.limit as number | undefined) ?? 1000,
      order: (c.parameters.order as 'asc' | 'desc' | undefined) ?? 'asc',
    });
    return {
      output: { topic: path, values, count: values.length, more },
      port: values.length > 0 ? 'out' : 'empty',
    };
  },
};

const pipelineRun: NodeType = {
  type: 'pipeline.run',
  typeVersion: 1,
  category: 'integration',
  title: 'Run pipeline',
  description:
    'Queues an execution of another pipeline of the organization from its first manual trigger (trigger `pipeline`), ' +
    'with `input` (JSONata; default the node input). Without `wait` it outputs `{ executionId, pipelineId, status }` at once; ' +
    'with `wait` it waits (up to the node timeout) and outputs also the `outputs` of the nodes that end that graph ' +
    '(kept when its history detail is full); a failed run fails the node. Pipelines may run each other 8 deep; ' +
    'waiting for a pipeline already in the chain is refused.',
  parameters: {
    type: 'object',
    properties: {
      pipelineId: reference('pipeline'),
      wait: { type: 'boolean', default: false },
      input: {
        type: 'string',
        minLength: 1,
        maxLength: 20_000,
        description: 'JSONata giving the input; default the node input.',
      },
    },
    required: ['pipelineId'],
    additionalProperties: false,
  },
  inputs: ['in'],
  outputs: ['out'],
  sideEffect: 'external',
  testable: true,
  expressionParameters: ['input'],
  run: async (c) => {
    const services = servicesOf(c);
    const input =
      typeof c.parameters.input === 'string' ? (await evaluateJsonata(c, c.parameters.input)).value : c.input;
    const result = await services.runPipeline(c.organizationId, {
      pipelineId: await stringParameter(c, 'pipelineId'),
      input: input ?? null,
      wait: c.parameters.wait === true,
      timeoutMs: c.timeoutMs,
      ...(c.run && {
        parent: c.run,
        idempotencyKey: `pipeline.run:${c.run.executionId}:${c.run.nodeId}:${c.run.iterationKey ?? ''}:${c.attempt}`,
      }),
    });
    return { output: result, port: 'out' };
  },
};

export const INTEGRATION_NODE_TYPES: NodeType[] = [connectionCall, unsFetch, pipelineRun];
