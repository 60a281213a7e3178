import { isDeepStrictEqual } from 'node:util';
import type { NodeServices } from './node-services.js';
import type { NodeStateAddress } from './node-state.repository.js';
import { evaluateJsonata, type NodeContext, NodeError, type NodeType } from './node-types.js';

// Node types that keep state per pipeline node and key (engine_node_state): buffer, deadband, on change.
// Only types are imported from node-types at load time (it lists these types; see data-nodes.ts).

/** Most values a buffer holds; a window reaching it is emitted. */
export const MAX_BUFFERED = 10_000;

const expressionOf = (description: string) => ({
  type: 'string',
  minLength: 1,
  maxLength: 5000,
  description,
});

const KEY = expressionOf(
  'JSONata giving the key state is kept per (e.g. `topic`); default one state for the node.',
);
const VALUE = expressionOf('JSONata giving the value to look at; default the input.');

export function servicesOf(c: NodeContext): NodeServices {
  if (!c.services)
    throw new NodeError('unavailable', 'this node needs the engine services, not offered here');
  return c.services;
}

async function evaluate(c: NodeContext, source: unknown, fallback: unknown): Promise<unknown> {
  if (typeof source !== 'string') return fallback;
  return (await evaluateJsonata(c, source)).value;
}

/** The state address of this node for the input's key. */
async function addressOf(c: NodeContext): Promise<NodeStateAddress> {
  const key = await evaluate(c, c.parameters.key, '');
  if (key !== undefined && key !== null && typeof key === 'object')
    throw new NodeError('bad_key', `key: must evaluate to a string or number, not ${JSON.stringify(key)}`);
  return {
    organizationId: c.organizationId,
    pipelineId: c.run?.pipelineId ?? '',
    nodeId: c.run?.nodeId ?? 'test',
    key: key === undefined || key === null ? '' : String(key).slice(0, 1000),
  };
}

interface BufferState {
  startedAt: number;
  values: unknown[];
}

const iso = (ms: number) => new Date(ms).toISOString();

const buffer: NodeType = {
  type: 'transform.buffer',
  typeVersion: 1,
  category: 'transform',
  title: 'Buffer',
  description:
    'Collects values into a batch per key and emits it on `out` when `count` values are held, or when a value arrives ' +
    'after the window of `windowMs` (opened by the first held value) has ended: that value then opens the next window. ' +
    'Meanwhile it leaves by `buffered`. The buffer is kept in the database, so a restart loses nothing held.',
  parameters: {
    type: 'object',
    properties: {
      count: { type: 'integer', minimum: 1, maximum: MAX_BUFFERED, description: 'Values per batch.' },
      windowMs: {
        type: 'integer',
        minimum: 1,
        maximum: 7 * 86_400_000,
        description: 'Length of a time window in milliseconds.',
      },
      value: VALUE,
      key: KEY,
    },
    anyOf: [{ required: ['count'] }, { required: ['windowMs'] }],
    additionalProperties: false,
  },
  inputs: ['in'],
  outputs: ['out', 'buffered'],
  sideEffect: 'none',
  testable: true,
  expressionParameters: ['value', 'key'],
  run: async (c) => {
    const services = servicesOf(c);
    const address = await addressOf(c);
    const value = (await evaluate(c, c.parameters.value, c.input)) ?? null;
    const count = c.parameters.count as number | undefined;
    const windowMs = c.parameters.windowMs as number | undefined;
    const now = services.now();
    const batch = (values: unknown[], startedAt: number) => ({
      key: address.key,
      values,
      count: values.length,
      startedAt: iso(startedAt),
      endedAt: iso(now),
    });
    return services.state.change<BufferState, { output: unknown; port: string }>(address, (state) => {
      if (state && windowMs !== undefined && now - state.startedAt >= windowMs)
        return {
          next: { startedAt: now, values: [value] },
          result: { output: batch(state.values, state.startedAt), port: 'out' },
        };
      const held = { startedAt: state?.startedAt ?? now, values: [...(state?.values ?? []), value] };
      if (held.values.length >= (count ?? MAX_BUFFERED))
        return { next: undefined, result: { output: batch(held.values, held.startedAt), port: 'out' } };
      return {
        next: held,
        result: {
          output: { key: address.key, buffered: held.values.length, startedAt: iso(held.startedAt) },
          port: 'buffered',
        },
      };
    });
  },
};

const deadband: NodeType = {
  type: 'transform.deadband',
  typeVersion: 1,
  category: 'transform',
  title: 'Deadband',
  description:
    'Passes the input on `out` when its numeric value differs from the last value passed (per key) by more than ' +
    '`deadband` (absolute, or percent of the last value); otherwise on `suppressed`. The first value passes.',
  parameters: {
    type: 'object',
    properties: {
      deadband: { type: 'number', minimum: 0, maximum: 1e15 },
      mode: { enum: ['absolute', 'percent'], default: 'absolute' },
      value: VALUE,
      key: KEY,
    },
    required: ['deadband'],
    additionalProperties: false,
  },
  inputs: ['in'],
  outputs: ['out', 'suppressed'],
  sideEffect: 'none',
  testable: true,
  expressionParameters: ['value', 'key'],
  run: async (c) => {
    const services = servicesOf(c);
    const address = await addressOf(c);
    const value = await evaluate(c, c.parameters.value, c.input);
    if (typeof value !== 'number' || !Number.isFinite(value))
      throw new NodeError('bad_value', `deadband needs a number, got ${JSON.stringify(value) ?? 'nothing'}`);
    const band = c.parameters.deadband as number;
    const percent = c.parameters.mode === 'percent';
    const passes = (last: number) => {
      const change = Math.abs(value - last);
      if (!percent) return change > band;
      return last === 0 ? change > 0 : (change / Math.abs(last)) * 100 > band;
    };
    const port = await services.state.change<{ last: number }, string>(address, (state) =>
      state === undefined || passes(state.last)
        ? { next: { last: value }, result: 'out' }
        : { next: state, result: 'suppressed' },
    );
    return { output: c.input ?? null, port };
  },
};

const onChange: NodeType = {
  type: 'transform.on-change',
  typeVersion: 1,
  category: 'transform',
  title: 'On change',
  description:
    'Report by exception: passes the input on `out` when its value (per key) differs from the last value passed ' +
    '(deep comparison of JSON), otherwise on `unchanged`. The first value passes.',
  parameters: {
    type: 'object',
    properties: { value: VALUE, key: KEY },
    additionalProperties: false,
  },
  inputs: ['in'],
  outputs: ['out', 'unchanged'],
  sideEffect: 'none',
  testable: true,
  expressionParameters: ['value', 'key'],
  run: async (c) => {
    const services = servicesOf(c);
    const address = await addressOf(c);
    const value = (await evaluate(c, c.parameters.value, c.input)) ?? null;
    const port = await services.state.change<{ last: unknown }, string>(address, (state) =>
      state === undefined || !isDeepStrictEqual(state.last, value)
        ? { next: { last: value }, result: 'out' }
        : { next: state, result: 'unchanged' },
    );
    return { output: c.input ?? null, port };
  },
};

export const STATEFUL_NODE_TYPES: NodeType[] = [buffer, deadband, onChange];
