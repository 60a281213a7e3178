import { existsSync, statSync } from 'node:fs';
import { dirname, join, normalize, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';

/** The package root: the nearest folder above this module that has package.json and web/ (sources, dist or bundle). */
function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'web'))) return dir;
    const parent = dirname(dir);
    if (parent === dir) return process.cwd();
    dir = parent;
  }
}

/** Where `vite build web` writes the console. */
export const DEFAULT_CONSOLE_ROOT = join(packageRoot(), 'web', 'dist');

/** Paths the console never answers: the API, discovery, metrics and health keep their own 404s. */
const RESERVED_PREFIXES = ['/api/', '/.well-known/', '/metrics', '/healthz', '/readyz'];

/**
 * The console's security headers: scripts and styles only from this origin (no inline script), no
 * framing (clickjacking), no referrer leaking paths to other sites.
 */
export const CONSOLE_HEADERS = {
  'content-security-policy': [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; '),
  'x-frame-options': 'DENY',
  'referrer-policy': 'same-origin',
  'cross-origin-opener-policy': 'same-origin',
};

const NOT_BUILT_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Meridian</title></head>
<body><h1>Meridian is running</h1>
<p>The web console has not been built. Run <code>npm run build</code> (or <code>npm ci</code>, which runs it), then restart the server.</p>
<p>The API is served under <a href="/api/docs">/api/docs</a>.</p></body></html>
`;

function isReserved(path: string): boolean {
  return RESERVED_PREFIXES.some((prefix) => path === prefix.replace(/\/$/, '') || path.startsWith(prefix));
}

function acceptsHtml(request: FastifyRequest): boolean {
  const accept = request.headers.accept ?? '';
  return accept.includes('text/html') || accept.includes('*/*');
}

/** The built file `path` names inside `root`, or null (never outside root, never a directory). */
function builtFile(root: string, path: string): string | null {
  let decoded: string;
  try {
    decoded = decodeURIComponent(path);
  } catch {
    return null;
  }
  if (decoded.includes('\0')) return null;
  const relative = normalize(decoded).replace(/^([/\\])+/, '');
  if (relative === '' || relative === '.') return null;
  const absolute = resolve(root, relative);
  if (!absolute.startsWith(root + sep)) return null;
  try {
    return statSync(absolute).isFile() ? relative : null;
  } catch {
    return null;
  }
}

/**
 * Serves the web console from `web/dist` at `/`: built files as they are, and `index.html` for every
 * other GET that wants HTML (client-side routes). Without a build, `/` explains how to make one.
 */
export const consoleRoutes: FastifyPluginAsync<{ root?: string }> = async (app, options) => {
  const root = resolve(options.root ?? DEFAULT_CONSOLE_ROOT);
  const built = existsSync(join(root, 'index.html'));
  if (built) await app.register(fastifyStatic, { root, serve: false, index: false });

  const sendIndex = (reply: FastifyReply) =>
    reply
      .headers({ ...CONSOLE_HEADERS, 'cache-control': 'no-cache' })
      .sendFile('index.html', root, { cacheControl: false });

  app.get('/*', { schema: { hide: true }, logLevel: 'warn' }, async (request, reply) => {
    const path = request.url.split('?')[0] ?? '/';
    if (isReserved(path)) return reply.callNotFound();
    if (!built) {
      if (!acceptsHtml(request)) return reply.callNotFound();
      return reply.code(503).headers(CONSOLE_HEADERS).type('text/html; charset=utf-8').send(NOT_BUILT_PAGE);
    }
    const file = builtFile(root, path);
    if (file !== null) {
      // Vite names assets by content hash, so they never change; everything else is revalidated.
      const immutable = file.startsWith(`assets${sep}`) || file.startsWith('assets/');
      return reply
        .headers({
          ...CONSOLE_HEADERS,
          'cache-control': immutable ? 'public, max-age=31536000, immutable' : 'no-cache',
        })
        .sendFile(file, root, { cacheControl: false });
    }
    if (!acceptsHtml(request) || /\.[a-z0-9]+$/i.test(path)) return reply.callNotFound();
    return sendIndex(reply);
  });
};
