import type { FunctionType } from './driver.js';

const params = {
  type: 'array',
  maxItems: 100,
  items: { type: ['string', 'number', 'boolean', 'null'] },
  description: 'Values bound to the statement’s parameters ($1 or ?); ((placeholders)) belong here.',
};

/** The function types every SQL protocol offers: parameterized queries and statements. */
export function sqlFunctionTypes(placeholderSyntax: string): FunctionType[] {
  const sql = {
    type: 'string',
    minLength: 1,
    maxLength: 100000,
    description: `The statement, with ${placeholderSyntax} parameters; never a ((placeholder)).`,
  };
  return [
    {
      type: 'sql.query',
      direction: 'read',
      description: 'A query; the value is { rows }.',
      configSchema: {
        type: 'object',
        required: ['sql'],
        additionalProperties: false,
        properties: { sql, params },
      },
      literalFields: ['sql'],
    },
    {
      type: 'sql.execute',
      direction: 'write',
      description: 'A statement that changes data; the value is { rowCount }.',
      configSchema: {
        type: 'object',
        required: ['sql'],
        additionalProperties: false,
        properties: { sql, params },
      },
      literalFields: ['sql'],
    },
  ];
}

/** The connection settings of a SQL server. */
export function sqlConfigSchema(defaultPort: number) {
  return {
    type: 'object',
    required: ['host', 'database', 'user'],
    additionalProperties: false,
    properties: {
      host: { type: 'string', minLength: 1, maxLength: 255 },
      port: { type: 'integer', minimum: 1, maximum: 65535, default: defaultPort },
      database: { type: 'string', minLength: 1, maxLength: 255 },
      user: { type: 'string', minLength: 1, maxLength: 255 },
      password: { type: 'string', maxLength: 1024, 'x-secret': true },
      ssl: { type: 'boolean', default: false },
      timeoutMs: { type: 'integer', minimum: 100, maximum: 600000, default: 30000 },
    },
  };
}
