import type { SchemaProperty } from './connections-api';

/** Words a config key is made of that read as acronyms or with their own spelling. */
const WORDS: Record<string, string> = {
  url: 'URL',
  id: 'ID',
  ids: 'IDs',
  tls: 'TLS',
  ssl: 'SSL',
  sql: 'SQL',
  ip: 'IP',
  http: 'HTTP',
  mqtt: 'MQTT',
  uns: 'UNS',
  fc: 'FC',
};

/** Units a key ends with, shown in brackets: `timeoutMs` is `Timeout (ms)`. */
const UNITS: Record<string, string> = { ms: 'ms', seconds: 's', bytes: 'bytes' };

/**
 * The label of a config field: the schema's `title` when it has one, else its key in words
 * (`endpointUrl` → `Endpoint URL`, `timeoutMs` → `Timeout (ms)`, `unitId` → `Unit ID`).
 */
export function fieldLabel(name: string, property: SchemaProperty = {}): string {
  if (property.title) return property.title;
  const words = name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/[_-]+/g, ' ')
    .split(' ')
    .filter(Boolean)
    .map((w) => w.toLowerCase());
  const last = words[words.length - 1];
  const unit = words.length > 1 && last ? UNITS[last] : undefined;
  if (unit) words.pop();
  const text = words.map((w, i) => WORDS[w] ?? (i === 0 ? w.charAt(0).toUpperCase() + w.slice(1) : w));
  return `${text.join(' ')}${unit ? ` (${unit})` : ''}`;
}

/** The help under a field: its description, its range and its default. */
export function fieldHint(property: SchemaProperty): string {
  const parts: string[] = [];
  if (property.description) parts.push(property.description);
  if (property.minimum !== undefined && property.maximum !== undefined)
    parts.push(`From ${property.minimum} to ${property.maximum}.`);
  if (property.default !== undefined && !property.enum) parts.push(`Default: ${String(property.default)}.`);
  return parts.join(' ');
}
