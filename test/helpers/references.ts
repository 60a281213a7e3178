import type { Reference } from '../../src/modules/graph/edges/references.js';

/** Entity ids the reference tests refer to: a connection, a function, a model, a pipeline. */
export const C = '11111111-1111-4111-8111-111111111111';
export const F = '22222222-2222-4222-8222-222222222222';
export const M = '33333333-3333-4333-8333-333333333333';
export const P = '44444444-4444-4444-8444-444444444444';

/** References as one line each: `<kind> <type>:<id or ?expression> via <via>[ dynamic]`. */
export const brief = (refs: Reference[]) =>
  refs.map(
    (r) =>
      `${r.kind} ${r.targetType}:${r.targetId ?? `?${r.expression}`} via ${r.via}${r.dynamic ? ' dynamic' : ''}`,
  );
