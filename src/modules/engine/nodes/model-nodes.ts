import jsonata from 'jsonata';
import { evaluateJsonata, NodeError, type NodeType, resolveTemplates } from './node-types.js';
import { servicesOf } from './stateful-nodes.js';

// Node types of data models: validate a value against a model, map a value onto a model's fields.
// Values of node-types are used only inside `run` (node-types lists these types; see data-nodes.ts).

const modelId = {
  type: 'string',
  minLength: 1,
  maxLength: 200,
  description: 'The model id, or `{{ expr }}`.',
};

async function modelIdOf(c: Parameters<NodeType['run']>[0]): Promise<string> {
  const id = await resolveTemplates(c.parameters.modelId, c);
  if (typeof id !== 'string' || id.length === 0)
    throw new NodeError('bad_parameter', 'modelId: must evaluate to a non-empty string');
  return id;
}

const validate: NodeType = {
  type: 'model.validate',
  typeVersion: 1,
  category: 'model',
  title: 'Validate against a model',
  description:
    "Validates the input (or `value`, JSONata) against a model's current version: the input leaves by `valid`, " +
    'or by `invalid` as `{ value, errors }` with each error a JSON pointer and a message.',
  parameters: {
    type: 'object',
    properties: {
      modelId,
      value: {
        type: 'string',
        minLength: 1,
        maxLength: 20_000,
        description: 'JSONata giving the value; default the input.',
      },
    },
    required: ['modelId'],
    additionalProperties: false,
  },
  inputs: ['in'],
  outputs: ['valid', 'invalid'],
  sideEffect: 'none',
  testable: true,
  expressionParameters: ['value'],
  run: async (c) => {
    const services = servicesOf(c);
    const value =
      typeof c.parameters.value === 'string'
        ? ((await evaluateJsonata(c, c.parameters.value)).value ?? null)
        : (c.input ?? null);
    const { valid, errors } = await services.validateModel(c.organizationId, await modelIdOf(c), value);
    return valid ? { output: value, port: 'valid' } : { output: { value, errors }, port: 'invalid' };
  },
};

const map: NodeType = {
  type: 'model.map',
  typeVersion: 1,
  category: 'model',
  title: 'Map to a model',
  description:
    'Builds an instance of a model: each member of `mapping` names a field of the model and holds the JSONata expression ' +
    'of its value (evaluated against the input; a field whose expression gives nothing is left out). The instance is ' +
    'validated against the model unless `validate` is false; an invalid one fails the node with the errors.',
  parameters: {
    type: 'object',
    properties: {
      modelId,
      mapping: {
        type: 'object',
        minProperties: 1,
        maxProperties: 500,
        additionalProperties: { type: 'string', minLength: 1, maxLength: 20_000 },
      },
      validate: { type: 'boolean', default: true },
    },
    required: ['modelId', 'mapping'],
    additionalProperties: false,
  },
  inputs: ['in'],
  outputs: ['out'],
  sideEffect: 'none',
  testable: true,
  expressionParameters: [],
  check: (p) => {
    const problems: { path: string; message: string }[] = [];
    for (const [field, source] of Object.entries(p.mapping as Record<string, string>))
      try {
        jsonata(source);
      } catch (error) {
        problems.push({
          path: `/mapping/${field.replace(/~/g, '~0').replace(/\//g, '~1')}`,
          message: `does not compile: ${(error as Error).message}`,
        });
      }
    return problems;
  },
  run: async (c) => {
    const services = servicesOf(c);
    const id = await modelIdOf(c);
    const fields = new Set(await services.modelFields(c.organizationId, id));
    const mapping = c.parameters.mapping as Record<string, string>;
    const unknown = Object.keys(mapping).filter((f) => !fields.has(f));
    if (unknown.length > 0)
      throw new NodeError(
        'bad_parameter',
        `mapping: ${unknown.map((f) => JSON.stringify(f)).join(', ')} ${unknown.length === 1 ? 'is not a field' : 'are not fields'} of the model (fields: ${[...fields].join(', ')})`,
      );
    const instance: Record<string, unknown> = {};
    for (const [field, source] of Object.entries(mapping)) {
      const { value } = await evaluateJsonata(c, source);
      if (value !== undefined) instance[field] = value;
    }
    if (c.parameters.validate !== false) {
      const { valid, errors } = await services.validateModel(c.organizationId, id, instance);
      if (!valid)
        throw new NodeError(
          'invalid_instance',
          `the mapped instance does not fit the model: ${errors
            .slice(0, 10)
            .map((e) => `${e.path || '/'} ${e.message}`)
            .join('; ')}`,
        );
    }
    return { output: instance, port: 'out' };
  },
};

export const MODEL_NODE_TYPES: NodeType[] = [validate, map];
