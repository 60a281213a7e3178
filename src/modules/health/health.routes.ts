import type { FastifyPluginAsync } from 'fastify';

/** A readiness check: resolves when the dependency is usable, throws with a reason when not. */
export type ReadinessCheck = () => Promise<void>;

const READY = {
  type: 'object',
  properties: {
    status: { type: 'string' },
    error: { type: 'string' },
    message: { type: 'string' },
    checks: {
      type: 'object',
      additionalProperties: { type: 'string' },
      description: 'ok, or why a check failed.',
    },
  },
} as const;

/** `/healthz` (the process answers) and `/readyz` (its dependencies answer too). */
export const healthRoutes: FastifyPluginAsync<{ checks: Record<string, ReadinessCheck> }> = async (
  app,
  { checks },
) => {
  app.get(
    '/healthz',
    {
      schema: {
        tags: ['Operations'],
        summary: 'Liveness: the process answers',
        response: { 200: { type: 'object', properties: { status: { type: 'string', const: 'ok' } } } },
      },
      logLevel: 'warn',
    },
    async () => ({ status: 'ok' }),
  );

  app.get(
    '/readyz',
    {
      schema: {
        tags: ['Operations'],
        summary: 'Readiness: every dependency answers',
        response: {
          200: READY,
          503: { ...READY, description: 'A dependency does not answer; see checks. Retry-After is set.' },
        },
      },
      logLevel: 'warn',
    },
    async (_request, reply) => {
      const results: Record<string, string> = {};
      let ready = true;
      await Promise.all(
        Object.entries(checks).map(async ([name, check]) => {
          try {
            await withTimeout(check(), 2000);
            results[name] = 'ok';
          } catch (error) {
            ready = false;
            results[name] = (error as Error).message.slice(0, 200) || 'failed';
          }
        }),
      );
      if (ready) return { status: 'ready', checks: results };
      reply.code(503).header('retry-after', '2');
      return { error: 'unavailable', message: 'not ready', checks: results };
    },
  );
};

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
