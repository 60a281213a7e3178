import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { type FastifyServerOptions, LogController } from 'fastify';
import { lazyRequestLoggers } from './request-logger.js';

const INCOMING_ID = /^[A-Za-z0-9._:-]{1,64}$/;

/** Query parameters whose values never reach a log line. */
const SECRET_PARAMS = new Set([
  'code',
  'client_secret',
  'token',
  'access_token',
  'refresh_token',
  'id_token',
  'password',
  'code_verifier',
  'state',
  'nonce',
]);

/** The URL with secret query values replaced by `[redacted]`. */
export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) return url;
  const params = new URLSearchParams(url.slice(q + 1));
  for (const key of [...params.keys()])
    if (SECRET_PARAMS.has(key.toLowerCase())) params.set(key, '[redacted]');
  return `${url.slice(0, q)}?${params.toString()}`;
}

/** Fastify logger and request-id options: JSON logs, a request id on every line, no secrets. */
export function loggingOptions(
  level: string,
): Pick<
  FastifyServerOptions,
  'logger' | 'genReqId' | 'logController' | 'requestIdHeader' | 'childLoggerFactory'
> {
  return {
    logger:
      level === 'silent'
        ? false
        : {
            level,
            redact: {
              paths: ['req.headers.authorization', 'req.headers.cookie', 'res.headers["set-cookie"]'],
              censor: '[redacted]',
            },
            serializers: {
              req: (req: { method: string; url: string; ip?: string }) => ({
                method: req.method,
                url: redactUrl(req.url),
                remoteAddress: req.ip,
              }),
            },
          },
    requestIdHeader: false,
    // A request's child logger is made when it first writes a line (request-logger.ts).
    ...(level === 'silent' ? {} : { childLoggerFactory: lazyRequestLoggers }),
    logController: new LogController({ requestIdLogLabel: 'requestId' }),
    genReqId: (req: IncomingMessage) => {
      const incoming = req.headers['x-request-id'];
      return typeof incoming === 'string' && INCOMING_ID.test(incoming) ? incoming : randomUUID();
    },
  };
}
