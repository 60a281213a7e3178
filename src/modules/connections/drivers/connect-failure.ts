import { DriverError, errorMessage, type FailureReason } from './driver.js';

/**
 * The one place that turns a failed session (or request) into what a person understands: host not
 * found, connection refused, timed out, host unreachable, security rejected, authentication failed.
 * It reads a DriverError's reason and kind, then the system error codes (`ENOTFOUND`, `ECONNREFUSED`
 * ...) of the error and its causes; libraries that wrap a socket error into a message of their own
 * (node-opcua, modbus-serial) keep the code in its text, which is read as the last resort.
 */

/** A failure as a person reads it: what went wrong, and the driver's words after it. */
export interface ExplainedFailure {
  reason: FailureReason;
  message: string;
}

/** The words a failure of each reason begins with; the others (an egress denial, a config error, a device's answer) say it themselves. */
const LABELS: Partial<Record<FailureReason, string>> = {
  host_not_found: 'host not found',
  connection_refused: 'connection refused',
  timed_out: 'timed out',
  host_unreachable: 'host unreachable',
  security_rejected: 'security rejected',
  authentication_failed: 'authentication failed',
};

/** System error codes (libuv, getaddrinfo) and what they mean to a person. */
const SYSTEM_CODES: Record<string, FailureReason> = {
  ENOTFOUND: 'host_not_found',
  EAI_AGAIN: 'host_not_found',
  EAI_NONAME: 'host_not_found',
  EAI_NODATA: 'host_not_found',
  ECONNREFUSED: 'connection_refused',
  ETIMEDOUT: 'timed_out',
  EHOSTUNREACH: 'host_unreachable',
  ENETUNREACH: 'host_unreachable',
  EHOSTDOWN: 'host_unreachable',
};

const CODE_IN_TEXT = new RegExp(`\\b(${Object.keys(SYSTEM_CODES).join('|')})\\b`);

/** The errors of `error`'s cause chain, itself first (at most 5 deep). */
function chainOf(error: unknown): unknown[] {
  const chain: unknown[] = [];
  for (let e = error; e !== undefined && e !== null && chain.length < 5; e = (e as { cause?: unknown }).cause)
    chain.push(e);
  return chain;
}

/** What went wrong, from the reason a driver set, the system code underneath, or the kind. */
export function failureReason(error: unknown): FailureReason {
  const chain = chainOf(error);
  for (const e of chain) if (e instanceof DriverError && e.detail.reason) return e.detail.reason;
  for (const e of chain) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && SYSTEM_CODES[code]) return SYSTEM_CODES[code];
  }
  if (error instanceof DriverError) {
    if (error.kind === 'authentication') return 'authentication_failed';
    if (error.kind === 'timeout') return 'timed_out';
  }
  for (const e of chain) {
    const found = CODE_IN_TEXT.exec(e instanceof Error ? e.message : String(e));
    if (found) return SYSTEM_CODES[found[1]!]!;
  }
  if (error instanceof DriverError)
    return error.kind === 'configuration'
      ? 'configuration'
      : error.kind === 'device'
        ? 'device'
        : 'transport';
  return 'transport';
}

/**
 * The failure explained: `<what went wrong>: <the driver's message>` (an egress denial, a config error
 * and a device's answer as the driver put them), every value of `secrets` blanked
 * out of it (a driver's message never should hold one; this makes sure of it).
 */
export function explainFailure(error: unknown, secrets: readonly string[] = []): ExplainedFailure {
  const reason = failureReason(error);
  let detail = errorMessage(error);
  for (const secret of secrets) if (secret.length >= 3) detail = detail.split(secret).join('***');
  const label = LABELS[reason];
  if (!label || detail.toLowerCase().startsWith(label)) return { reason, message: detail };
  return { reason, message: `${label}: ${detail}` };
}
