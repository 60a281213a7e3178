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
      description:
        'One statement (never two: `a; b` is refused) whose rows are the value, { rows }. On a read-only connection it runs in a read-only transaction, rolled back.',
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
      description:
        'One statement that changes data; the value is { rowCount }. Refused on a read-only connection.',
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
