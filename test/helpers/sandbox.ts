import assert from 'node:assert/strict';
import { Sandbox, SandboxError, type SandboxLimits } from '../../src/modules/engine/sandbox/sandbox.js';

/** A sandbox's evaluations on behalf of one organization, with limits given as the second half. */
export function sandboxAs(sandbox: Sandbox, organizationId = 'org-test') {
  const as =
    (kind: 'jsonata' | 'javascript') =>
    (
      source: string,
      input: unknown,
      bindings: Record<string, unknown> = {},
      limits: Partial<SandboxLimits> = {},
    ) =>
      sandbox[kind](source, input, bindings, { organizationId, ...limits });
  return { jsonata: as('jsonata'), javascript: as('javascript') };
}

/** Runs `test` with a sandbox of one thread (and its evaluations as sandboxAs makes them); closes it after. */
export async function onOneThread(
  test: (pool: Sandbox, one: ReturnType<typeof sandboxAs>) => Promise<void>,
): Promise<void> {
  const pool = new Sandbox(undefined, 1);
  try {
    await test(pool, sandboxAs(pool));
  } finally {
    await pool.close();
  }
}

/** Awaits `evaluation`, expecting a SandboxError with `code` and a message matching `message`; answers it. */
export async function refused(
  evaluation: Promise<unknown> | (() => Promise<unknown>),
  code: string,
  message: RegExp,
): Promise<SandboxError> {
  let caught: SandboxError | undefined;
  await assert.rejects(typeof evaluation === 'function' ? evaluation : () => evaluation, (error: unknown) => {
    assert.ok(error instanceof SandboxError, String(error));
    assert.equal(error.code, code, error.message);
    assert.match(error.message, message);
    caught = error;
    return true;
  });
  return caught!;
}
