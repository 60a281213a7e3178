import jsonata from 'jsonata';
// Values from node-types are used only inside functions: node-types imports this module (a cycle).
import {
  evaluateJsonata,
  type NodeContext,
  NodeError,
  type NodeType,
  resolveTemplates,
} from './node-types.js';

const MAX_RULES = 32;
const OPERATORS = ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'contains', 'startsWith', 'endsWith'] as const;
type Operator = (typeof OPERATORS)[number];
/** A string holding exactly `{{ expr }}` (evaluated when the node runs). */
const TEMPLATE_PATTERN = '^\\s*\\{\\{[\\s\\S]*\\}\\}\\s*$';
const YEAR_SECONDS = 366 * 86_400;

interface Rule {
  expression?: string;
  operator?: Operator;
  value?: unknown;
  compare?: unknown;
}

function compiles(source: string): string | null {
  try {
    jsonata(source);
    return null;
  } catch (error) {
    return `does not compile: ${(error as Error).message}`;
  }
}

function compare(operator: Operator, left: unknown, right: unknown): boolean {
  switch (operator) {
    case 'eq':
      return JSON.stringify(left) === JSON.stringify(right);
    case 'ne':
      return JSON.stringify(left) !== JSON.stringify(right);
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte': {
      const comparable =
        (typeof left === 'number' && typeof right === 'number') ||
        (typeof left === 'string' && typeof right === 'string');
      if (!comparable) return false;
      const l = left as number | string;
      const r = right as number | string;
      return operator === 'gt' ? l > r : operator === 'gte' ? l >= r : operator === 'lt' ? l < r : l <= r;
    }
    case 'contains':
      if (Array.isArray(left)) return left.some((v) => JSON.stringify(v) === JSON.stringify(right));
      return typeof left === 'string' && typeof right === 'string' && left.includes(right);
    case 'startsWith':
      return typeof left === 'string' && typeof right === 'string' && left.startsWith(right);
    case 'endsWith':
      return typeof left === 'string' && typeof right === 'string' && left.endsWith(right);
  }
}

async function matches(rule: Rule, c: NodeContext): Promise<boolean> {
  if (rule.expression !== undefined) {
    const { value } = await evaluateJsonata(c, rule.expression);
    return Boolean(value);
  }
  const left = 'value' in rule ? await resolveTemplates(rule.value, c) : c.input;
  return compare(rule.operator!, left, await resolveTemplates(rule.compare, c));
}

const switchNode: NodeType = {
  type: 'flow.switch',
  typeVersion: 1,
  category: 'flow',
  title: 'Switch',
  description:
    'Routes the input by ordered rules: each a JSONata `expression`, or a comparison of `value` (default: the input; ' +
    '`{{ expr }}` allowed) with `compare` by `operator`. Rule n leaves by port `case_n`; no match leaves by `default`. ' +
    '`mode`: `first` (the first matching rule) or `all` (every matching rule).',
  parameters: {
    type: 'object',
    properties: {
      rules: {
        type: 'array',
        minItems: 1,
        maxItems: MAX_RULES,
        items: {
          type: 'object',
          properties: {
            expression: { type: 'string', minLength: 1, maxLength: 20_000 },
            operator: { enum: [...OPERATORS] },
            value: { description: 'Left side (default: the input); `{{ expr }}` allowed.' },
            compare: { description: 'Right side; `{{ expr }}` allowed.' },
          },
          additionalProperties: false,
        },
      },
      mode: { enum: ['first', 'all'], default: 'first' },
    },
    required: ['rules'],
    additionalProperties: false,
  },
  inputs: ['in'],
  outputs: ['default'],
  outputsFor: (parameters) => [
    ...(Array.isArray(parameters.rules) ? parameters.rules.map((_, i) => `case_${i}`) : []),
    'default',
  ],
  dynamicOutputs: { parameter: 'rules', port: 'case_{index}' },
  sideEffect: 'none',
  testable: true,
  expressionParameters: [],
  check: (parameters) => {
    const problems: { path: string; message: string }[] = [];
    (parameters.rules as Rule[]).forEach((rule, i) => {
      const hasExpression = rule.expression !== undefined;
      if (hasExpression === (rule.operator !== undefined))
        problems.push({ path: `/rules/${i}`, message: 'must have either expression or operator (not both)' });
      if (hasExpression) {
        const error = compiles(rule.expression!);
        if (error) problems.push({ path: `/rules/${i}/expression`, message: error });
      } else if (rule.operator !== undefined && !('compare' in rule))
        problems.push({ path: `/rules/${i}/compare`, message: 'is required with operator' });
    });
    return problems;
  },
  run: async (c) => {
    const rules = c.parameters.rules as Rule[];
    const ports: string[] = [];
    for (const [i, rule] of rules.entries()) {
      if (!(await matches(rule, c))) continue;
      ports.push(`case_${i}`);
      if (c.parameters.mode !== 'all') break;
    }
    if (ports.length === 0) ports.push('default');
    return { output: c.input ?? null, port: ports[0]!, ports };
  },
};

const mergeNode: NodeType = {
  type: 'flow.merge',
  typeVersion: 1,
  category: 'flow',
  title: 'Merge',
  description:
    '`wait: all` runs once every connected input arrived (when a branch was not taken, the merge does not run); ' +
    '`wait: first` runs on the first input. `output`: `object` (by source node name), `array` (in arrival order) or `first`.',
  parameters: {
    type: 'object',
    properties: {
      wait: { enum: ['all', 'first'], default: 'all' },
      output: { enum: ['object', 'array', 'first'], default: 'object' },
    },
    additionalProperties: false,
  },
  inputs: ['in'],
  outputs: ['out'],
  join: (parameters) => (parameters.wait === 'first' ? 'first' : 'all'),
  sideEffect: 'none',
  testable: true,
  expressionParameters: [],
  run: async (c) => {
    const inputs = c.inputs ?? [{ source: 'input', port: 'out', data: c.input }];
    const mode = c.parameters.wait === 'first' ? 'first' : ((c.parameters.output as string) ?? 'object');
    if (mode === 'first') return { output: inputs[0]?.data ?? null, port: 'out' };
    if (mode === 'array') return { output: inputs.map((i) => i.data ?? null), port: 'out' };
    const output: Record<string, unknown> = {};
    for (const i of inputs) output[i.source in output ? `${i.source}.${i.port}` : i.source] = i.data ?? null;
    return { output, port: 'out' };
  },
};

const forEachNode: NodeType = {
  type: 'flow.for-each',
  typeVersion: 1,
  category: 'flow',
  title: 'For each',
  description:
    'Evaluates `items` (JSONata, default `$`) to an array; the nodes on its `item` port run once per element ' +
    '(input: the element; `$node["<this node>"].data` is `{ item, index, count }`), each run recorded with its ' +
    'iteration. Then `done` carries the results: per element, the output of the last node of the loop body that ran. ' +
    'More than `maxItems` elements end the node with an error.',
  parameters: {
    type: 'object',
    properties: {
      items: { type: 'string', minLength: 1, maxLength: 20_000, default: '$' },
      maxItems: { type: 'integer', minimum: 1, maximum: 100_000, default: 1000 },
    },
    additionalProperties: false,
  },
  inputs: ['in'],
  outputs: ['item', 'done'],
  sideEffect: 'none',
  testable: true,
  expressionParameters: ['items'],
  run: async (c) => {
    const { value } = await evaluateJsonata(c, String(c.parameters.items ?? '$'));
    // JSONata answers a one-element sequence as the element itself.
    const items = value === undefined || value === null ? [] : Array.isArray(value) ? value : [value];
    const max = (c.parameters.maxItems as number | undefined) ?? 1000;
    if (items.length > max)
      throw new NodeError('too_many_items', `items has ${items.length} elements, more than maxItems ${max}`);
    return { output: items, port: 'item', iterate: items };
  },
};

const waitNode: NodeType = {
  type: 'flow.wait',
  typeVersion: 1,
  category: 'flow',
  title: 'Wait',
  description:
    'Passes its input on after `seconds` (up to a year) or at `until` (ISO 8601 time; a past time continues at once); ' +
    'either may be `{{ expr }}`. A long wait holds no worker: the execution is parked in the database (status ' +
    '`waiting`) and resumed at that time, also after a restart.',
  parameters: {
    type: 'object',
    properties: {
      seconds: {
        type: ['number', 'string'],
        maxLength: 20_000,
        description: `A number from 0 to ${YEAR_SECONDS}, or \`{{ expr }}\`.`,
      },
      until: { type: 'string', minLength: 1, maxLength: 20_000 },
    },
    additionalProperties: false,
  },
  inputs: ['in'],
  outputs: ['out'],
  sideEffect: 'none',
  testable: true,
  expressionParameters: [],
  check: (parameters) => {
    if ('seconds' in parameters === 'until' in parameters)
      return [{ path: '/seconds', message: 'either seconds or until is required (not both)' }];
    const seconds = parameters.seconds;
    const template = new RegExp(TEMPLATE_PATTERN);
    if (
      seconds !== undefined &&
      (typeof seconds === 'number' ? seconds < 0 || seconds > YEAR_SECONDS : !template.test(String(seconds)))
    )
      return [
        { path: '/seconds', message: `must be a number from 0 to ${YEAR_SECONDS} or a {{ expression }}` },
      ];
    const until = parameters.until;
    if (typeof until === 'string' && !template.test(until) && Number.isNaN(Date.parse(until)))
      return [{ path: '/until', message: 'must be an ISO 8601 time or a {{ expression }}' }];
    return [];
  },
  run: async (c) => {
    const now = c.now?.() ?? Date.now();
    let waitUntil: number;
    if ('seconds' in c.parameters) {
      const seconds = await resolveTemplates(c.parameters.seconds, c);
      if (typeof seconds !== 'number' || !Number.isFinite(seconds) || seconds < 0 || seconds > YEAR_SECONDS)
        throw new NodeError('bad_parameter', `seconds: must evaluate to a number from 0 to ${YEAR_SECONDS}`);
      waitUntil = now + Math.round(seconds * 1000);
    } else {
      const until = await resolveTemplates(c.parameters.until, c);
      const at = typeof until === 'string' ? Date.parse(until) : typeof until === 'number' ? until : NaN;
      if (Number.isNaN(at)) throw new NodeError('bad_parameter', 'until: must evaluate to an ISO 8601 time');
      waitUntil = Math.max(now, at);
    }
    return { output: c.input ?? null, port: 'out', waitUntil };
  },
};

/** Flow control: switch, merge, for-each and wait (condition and stop-error are in node-types). */
export const FLOW_NODE_TYPES: NodeType[] = [switchNode, mergeNode, forEachNode, waitNode];
