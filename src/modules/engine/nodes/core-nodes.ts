// Values from node-types are used only inside functions: node-types imports this module (a cycle).
import { Cron } from 'croner';
import {
  bindingsOf,
  evaluateJsonata,
  evaluationOf,
  NodeError,
  type NodeType,
  resolveTemplates,
} from './node-types.js';

const expression = (description: string) => ({
  type: 'string',
  minLength: 1,
  maxLength: 20_000,
  description,
});

/** The first node types: manual and schedule triggers, condition, stop with error, set, JSONata, JavaScript, UNS publish. */
export const CORE_NODE_TYPES: NodeType[] = [
  {
    type: 'trigger.manual',
    typeVersion: 1,
    category: 'trigger',
    title: 'Manual trigger',
    description:
      'Starts the pipeline from `POST /engine/pipelines/{id}/execute`; its output is the request input.',
    parameters: { type: 'object', properties: {}, additionalProperties: false },
    inputs: [],
    outputs: ['out'],
    sideEffect: 'none',
    testable: true,
    expressionParameters: [],
    run: async (c) => ({ output: c.input ?? null, port: 'out' }),
  },
  {
    type: 'trigger.schedule',
    typeVersion: 1,
    category: 'trigger',
    title: 'Schedule',
    description:
      'Starts the pipeline at each fire time of a cron pattern (5 fields, or 6 with seconds first) in a time zone, ' +
      'once per fire time across replicas, while the pipeline is enabled. Its output is `{ firedAt }`.',
    parameters: {
      type: 'object',
      properties: {
        cron: {
          type: 'string',
          minLength: 9,
          maxLength: 200,
          description: 'e.g. `*/5 * * * * *` (every 5 s).',
        },
        timezone: { type: 'string', minLength: 1, maxLength: 64, description: 'IANA name; default UTC.' },
      },
      required: ['cron'],
      additionalProperties: false,
    },
    inputs: [],
    outputs: ['out'],
    sideEffect: 'none',
    testable: true,
    expressionParameters: [],
    check: (parameters) => {
      const timezone = (parameters.timezone as string | undefined) ?? 'UTC';
      try {
        new Intl.DateTimeFormat('en', { timeZone: timezone });
      } catch {
        return [{ path: '/timezone', message: `is not a known IANA time zone: ${JSON.stringify(timezone)}` }];
      }
      try {
        const cron = new Cron(String(parameters.cron), { timezone, paused: true });
        cron.nextRun();
        cron.stop();
        return [];
      } catch (error) {
        return [{ path: '/cron', message: `is not valid: ${(error as Error).message}` }];
      }
    },
    run: async (c) => ({ output: c.input ?? null, port: 'out' }),
  },
  {
    type: 'flow.condition',
    typeVersion: 1,
    category: 'flow',
    title: 'Condition',
    description: 'Evaluates a JSONata expression against the input; passes the input on `true` or `false`.',
    parameters: {
      type: 'object',
      properties: { expression: expression('JSONata; `$` is the input, `$trigger` and `$node` are bound.') },
      required: ['expression'],
      additionalProperties: false,
    },
    inputs: ['in'],
    outputs: ['true', 'false'],
    sideEffect: 'none',
    testable: true,
    expressionParameters: ['expression'],
    run: async (c) => {
      const { value } = await evaluateJsonata(c, String(c.parameters.expression));
      return { output: c.input ?? null, port: value ? 'true' : 'false' };
    },
  },
  {
    type: 'flow.stop-error',
    typeVersion: 1,
    category: 'flow',
    title: 'Stop with error',
    description:
      'Ends the node with the given error message (and the execution, unless on-error says otherwise).',
    parameters: {
      type: 'object',
      properties: { message: { type: 'string', minLength: 1, maxLength: 1000 } },
      required: ['message'],
      additionalProperties: false,
    },
    inputs: ['in'],
    outputs: [],
    sideEffect: 'none',
    testable: true,
    expressionParameters: [],
    run: async (c) => {
      throw new NodeError('stopped', String(c.parameters.message));
    },
  },
  {
    type: 'transform.set',
    typeVersion: 1,
    category: 'transform',
    title: 'Set fields',
    description:
      'Sets members on the input (`merge`) or builds a new object (`replace`). A string value `{{ expr }}` is a JSONata expression.',
    parameters: {
      type: 'object',
      properties: {
        fields: { type: 'object', maxProperties: 200 },
        mode: { enum: ['merge', 'replace'], default: 'merge' },
      },
      required: ['fields'],
      additionalProperties: false,
    },
    inputs: ['in'],
    outputs: ['out'],
    sideEffect: 'none',
    testable: true,
    expressionParameters: [],
    run: async (c) => {
      const fields = (await resolveTemplates(c.parameters.fields, c)) as Record<string, unknown>;
      const base =
        c.parameters.mode !== 'replace' && c.input && typeof c.input === 'object' && !Array.isArray(c.input)
          ? (c.input as Record<string, unknown>)
          : {};
      return { output: { ...base, ...fields }, port: 'out' };
    },
  },
  {
    type: 'transform.jsonata',
    typeVersion: 1,
    category: 'transform',
    title: 'JSONata expression',
    description:
      'Its output is the expression evaluated against the input (`$`), with `$trigger` and `$node` bound.',
    parameters: {
      type: 'object',
      properties: { expression: expression('JSONata.') },
      required: ['expression'],
      additionalProperties: false,
    },
    inputs: ['in'],
    outputs: ['out'],
    sideEffect: 'none',
    testable: true,
    expressionParameters: ['expression'],
    run: async (c) => {
      const { value } = await evaluateJsonata(c, String(c.parameters.expression));
      return { output: value ?? null, port: 'out' };
    },
  },
  {
    type: 'code.javascript',
    typeVersion: 1,
    category: 'code',
    title: 'JavaScript code',
    description:
      'A function body run in QuickJS (no process, require, file system or network) with `$input`, `$trigger`, `$node` and `$attempt`; its return value (JSON) is the output. `console.log` lines are kept.',
    parameters: {
      type: 'object',
      properties: { code: { type: 'string', minLength: 1, maxLength: 100_000 } },
      required: ['code'],
      additionalProperties: false,
    },
    inputs: ['in'],
    outputs: ['out'],
    sideEffect: 'none',
    testable: true,
    expressionParameters: [],
    codeParameters: ['code'],
    run: async (c) => {
      const { value, logs } = await c.sandbox.javascript(
        String(c.parameters.code),
        c.input,
        bindingsOf(c),
        evaluationOf(c),
      );
      return { output: value ?? null, port: 'out', logs };
    },
  },
  {
    type: 'uns.publish',
    typeVersion: 1,
    category: 'uns',
    title: 'UNS publish',
    description:
      'Publishes a value to a UNS topic of the organization (default: the input). `topic` and `value` may be `{{ expr }}`.',
    parameters: {
      type: 'object',
      properties: {
        topic: { type: 'string', minLength: 1, maxLength: 1024 },
        value: { description: 'Default: the input.' },
        quality: { type: 'integer', minimum: 0, maximum: 2 },
      },
      required: ['topic'],
      additionalProperties: false,
    },
    inputs: ['in'],
    outputs: ['out'],
    sideEffect: 'external',
    testable: true,
    expressionParameters: [],
    run: async (c) => {
      const topic = await resolveTemplates(c.parameters.topic, c);
      if (typeof topic !== 'string') throw new NodeError('bad_parameter', 'topic: must evaluate to a string');
      const value = 'value' in c.parameters ? await resolveTemplates(c.parameters.value, c) : c.input;
      await c.publish(topic, value, c.parameters.quality as number | undefined);
      return { output: { topic, value }, port: 'out' };
    },
  },
];
