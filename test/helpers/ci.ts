/**
 * Whether the tests run in CI (`CI=true`, as GitHub Actions and most runners set it). There, a check that
 * cannot run (no root for a mount, no PostgreSQL, a V8 that behaves differently) fails instead of skipping:
 * a green CI run must mean every check ran.
 */
export function inCi(env: NodeJS.ProcessEnv = process.env): boolean {
  const value = (env.CI ?? '').trim().toLowerCase();
  return value !== '' && value !== 'false' && value !== '0';
}

/** The reason to skip, outside CI; in CI it is thrown, so that the suite fails and says why. */
export function skipOutsideCi(reason: string, env: NodeJS.ProcessEnv = process.env): string {
  if (inCi(env)) throw new Error(`in CI this check must run, but ${reason}`);
  return reason;
}
