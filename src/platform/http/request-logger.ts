import type { FastifyBaseLogger, FastifyServerOptions } from 'fastify';
import type { Bindings, ChildLoggerOptions, Level, Logger } from 'pino';

/**
 * Fastify's `childLoggerFactory`: each request's logger (`request.log`, with its request id) becomes
 * pino's child logger only when the request first writes a line at a level the logger writes. Fastify
 * makes a child for every request, and pino's `child` serializes the bindings at once: about a
 * microsecond a request, for a line that at the usual levels is almost never written (Fastify's own
 * `incoming request` and `request completed` lines are `info`, off under `warn`). A route with a level
 * or serializers of its own (`logLevel`) gets its child at once.
 */
export const lazyRequestLoggers: NonNullable<FastifyServerOptions['childLoggerFactory']> = (
  logger,
  bindings,
  options,
) =>
  Object.keys(options).length === 0
    ? (new RequestLogger(logger as Logger, bindings) as unknown as FastifyBaseLogger)
    : logger.child(bindings, options);

/** A request's logger; the pino child behind it is made on the first line it writes (see above). */
export class RequestLogger {
  /** The pino child, once made. */
  private made: FastifyBaseLogger | undefined;

  constructor(
    private readonly parent: Logger,
    private readonly bindings: Bindings,
  ) {}

  /** The child's level; until it is made, its parent's (which may change while the server runs). */
  get level(): string {
    return this.made?.level ?? this.parent.level;
  }

  set level(level: string) {
    this.pino().level = level;
  }

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.pino().child(bindings, options);
  }

  // Methods on the prototype: fields would be six closures a request.
  fatal(...args: unknown[]): void {
    this.write('fatal', args);
  }

  error(...args: unknown[]): void {
    this.write('error', args);
  }

  warn(...args: unknown[]): void {
    this.write('warn', args);
  }

  info(...args: unknown[]): void {
    this.write('info', args);
  }

  debug(...args: unknown[]): void {
    this.write('debug', args);
  }

  trace(...args: unknown[]): void {
    this.write('trace', args);
  }

  silent(): void {}

  /** Writes a line at `level` through the child, made now unless the level is off. */
  write(level: Level, args: unknown[]): void {
    if (this.made === undefined && !this.parent.isLevelEnabled(level)) return;
    (this.pino()[level] as (...line: unknown[]) => void)(...args);
  }

  private pino(): FastifyBaseLogger {
    this.made ??= this.parent.child(this.bindings);
    return this.made;
  }
}
