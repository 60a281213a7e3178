import assert from 'node:assert/strict';
import { type Sandbox, SandboxError, type SandboxLimits } from '../../src/modules/engine/sandbox/sandbox.js';

/** A sandbox's evaluations on behalf of one organization, with limits given as the second half. */
export function sandboxAs(sandbox: Sandbox, organizationId = 'org-test') {
  return {
    jsonata: (
      expression: string,
      input: unknown,
      bindings: Record<string, unknown> = {},
      limits: Partial<SandboxLimits> = {},
    ) => sandbox.jsonata(expression, input, bindings, { organizationId, ...limits }),
    javascript: (
      code: string,
      input: unknown,
      bindings: Record<string, unknown> = {},
      limits: Partial<SandboxLimits> = {},
    ) => sandbox.javascript(code, input, bindings, { organizationId, ...limits }),
  };
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
