import { badRequest } from '../../../platform/errors.js';
import { parseTopicFilter } from '../../uns/topics/topic-filter.js';
import { isControlCode } from '../../uns/topics/topic-text.js';
import type { Variable } from '../dashboards/dashboard-rules.js';
import type { DashboardQueryRepository } from './query.repository.js';

const MAX_VARIABLE_VALUES = 500;

/** A dashboard's variables: the values each can take and the ones a query selects. */
export class DashboardVariables {
  constructor(
    private readonly repository: DashboardQueryRepository,
    private readonly topicPrefix: string,
  ) {}

  /** Each variable's selected values: the request's, else its default, else its first value. */
  async selected(
    organizationId: string,
    variables: Variable[],
    chosen: Record<string, string | string[]>,
  ): Promise<Map<string, string[]>> {
    const known = new Set(variables.map((v) => v.name));
    for (const name of Object.keys(chosen)) {
      if (!known.has(name)) throw badRequest(`variables.${name}: unknown variable`);
    }
    const out = new Map<string, string[]>();
    for (const variable of variables) {
      const given = chosen[variable.name];
      let values: string[];
      if (given !== undefined) {
        values = Array.isArray(given) ? given : [given];
        if (values.length === 0) throw badRequest(`variables.${variable.name}: choose at least one value`);
        if (values.length > 1 && !variable.multi) {
          throw badRequest(`variables.${variable.name}: takes one value (the variable is not multi)`);
        }
        for (const value of values) {
          if (
            value.length === 0 ||
            value.length > 200 ||
            /[/+#]/.test(value) ||
            [...value].some((c) => isControlCode(c.charCodeAt(0)))
          ) {
            throw badRequest(
              `variables.${variable.name}: ${JSON.stringify(value.slice(0, 40))} is not a topic segment`,
            );
          }
        }
      } else if (variable.default !== undefined) values = [variable.default];
      else values = (await this.values(organizationId, variable)).slice(0, 1);
      out.set(variable.name, values);
    }
    return out;
  }

  /** The values a variable can take: a segment variable's names at its level, a custom one's options. */
  async values(organizationId: string, variable: Variable): Promise<string[]> {
    if (variable.type === 'custom') return [...(variable.options ?? [])];
    if (variable.type === 'constant') return variable.default === undefined ? [] : [variable.default];
    const segments = parseTopicFilter(variable.filter!, this.topicPrefix, 'filter').segments;
    const parent = segments.length > 2 ? segments.slice(0, -1).join('/') : null;
    return this.repository.childNames(organizationId, parent, MAX_VARIABLE_VALUES);
  }
}
