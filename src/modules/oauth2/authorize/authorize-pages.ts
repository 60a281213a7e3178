import { KNOWN_SCOPES } from '../checks/check-scope.js';

/** Escapes text for HTML element content and double-quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"'`]/g, (c) => `&#${c.charCodeAt(0)};`);
}

const DESCRIPTIONS = new Map(KNOWN_SCOPES.map((s) => [s.name, s.description]));

/** Headers of every page of the authorization flow: no framing (clickjacking), no caching, no referrer. */
export const PAGE_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  'x-frame-options': 'DENY',
  'content-security-policy':
    "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'",
  'referrer-policy': 'no-referrer',
};

function layout(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · Meridian</title>
<style>body{font-family:system-ui,sans-serif;background:#f4f5f7;margin:0}main{max-width:28rem;margin:4rem auto;background:#fff;padding:2rem;border-radius:8px;box-shadow:0 1px 4px #0002}
h1{font-size:1.3rem}label{display:block;margin:.6rem 0}input[type=email],input[type=password]{width:100%;padding:.5rem;box-sizing:border-box}
button{padding:.5rem 1.2rem;margin-right:.5rem}.error{color:#b00020}.scope small{display:block;color:#555;margin-left:1.6rem}</style>
</head><body><main>${body}</main></body></html>`;
}

/** The page shown when the request cannot be redirected back (unknown client, unregistered redirect URI). */
export function renderErrorPage(message: string): string {
  return layout(
    'Authorization error',
    `<h1>This authorization request cannot be completed</h1><p class="error">${escapeHtml(message)}</p>
<p>Return to the application and try again, or contact its administrator.</p>`,
  );
}

/** The sign-in form; it posts back with the authorization request and resumes it after sign-in. */
export function renderLoginPage(input: {
  action: string;
  request: string;
  csrf: string;
  appName: string;
  error?: string;
  email?: string;
}): string {
  const error = input.error ? `<p class="error" role="alert">${escapeHtml(input.error)}</p>` : '';
  return layout(
    'Sign in',
    `<h1>Sign in to continue to ${escapeHtml(input.appName)}</h1>${error}
<form method="post" action="${escapeHtml(input.action)}">
<input type="hidden" name="request" value="${escapeHtml(input.request)}">
<input type="hidden" name="csrf" value="${escapeHtml(input.csrf)}">
<label>Email <input type="email" name="email" autocomplete="username" required value="${escapeHtml(input.email ?? '')}"></label>
<label>Password <input type="password" name="password" autocomplete="current-password" required></label>
<button type="submit">Sign in</button></form>`,
  );
}

/** The consent screen: application name and description, the requested scopes as checkboxes. */
export function renderConsentPage(input: {
  action: string;
  request: string;
  csrf: string;
  appName: string;
  appDescription: string;
  userEmail: string;
  scopes: readonly string[];
}): string {
  const items = input.scopes
    .map((scope) => {
      const description = DESCRIPTIONS.get(scope) ?? 'A permission defined by your administrator';
      return `<label class="scope"><input type="checkbox" name="scope" value="${escapeHtml(scope)}" checked> <code>${escapeHtml(scope)}</code><small>${escapeHtml(description)}</small></label>`;
    })
    .join('\n');
  const description = input.appDescription ? `<p>${escapeHtml(input.appDescription)}</p>` : '';
  return layout(
    'Authorize',
    `<h1>${escapeHtml(input.appName)} wants to access your Meridian account</h1>${description}
<p>Signed in as ${escapeHtml(input.userEmail)}. Choose what to allow:</p>
<form method="post" action="${escapeHtml(input.action)}">
<input type="hidden" name="request" value="${escapeHtml(input.request)}">
<input type="hidden" name="csrf" value="${escapeHtml(input.csrf)}">
${items}
<p><button type="submit" name="decision" value="allow">Allow</button><button type="submit" name="decision" value="deny">Deny</button></p></form>`,
  );
}
