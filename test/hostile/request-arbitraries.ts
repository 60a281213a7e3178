import fc from 'fast-check';

/** Strings that break naive code: SQL, paths, templates, encodings, control and wide characters. */
export const NASTY_STRINGS = [
  "' OR '1'='1",
  "'; DROP TABLE users; --",
  '" OR ""="',
  '../../../../etc/passwd',
  '..%2f..%2fetc%2fpasswd',
  '%00',
  '\u0000',
  '\r\nX-Injected: 1',
  '{{7*7}}',
  // A log4shell probe: the text, not a template.
  '$' + '{jndi:ldap://x}',
  '<script>alert(1)</script>',
  '%',
  '_',
  '\\',
  '#',
  '+',
  '/',
  '//',
  'v1/+/#',
  '\uD800',
  '\uFEFF',
  '𝔘𝔫𝔦𝔠𝔬𝔡𝔢',
  'Ǆ',
  '-1',
  '1e309',
  'NaN',
  'null',
  'true',
  '00000000-0000-0000-0000-000000000000',
  ' ',
  '',
];

export const nastyString = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...NASTY_STRINGS) },
  { weight: 3, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 1, arbitrary: fc.constantFrom(10_000, 70_000, 300_000).map((n) => 'x'.repeat(n)) },
);

/** JSON text nested `depth` levels deep (built as text: a value this deep would overflow our own stack). */
const deepJsonText = fc
  .tuple(fc.integer({ min: 50, max: 20_000 }), fc.constantFrom('[', '{"a":'))
  .map(([depth, open]) => `${open.repeat(depth)}1${(open === '[' ? ']' : '}').repeat(depth)}`);

export const nastyValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: nastyString },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  {
    weight: 2,
    arbitrary: fc.constantFrom(0, -1, 1.5, 2 ** 53, -(2 ** 63), 1e308, true, false, null, [], {}, [null], {
      $gt: '',
    }),
  },
);

interface SchemaLike {
  properties?: Record<string, unknown>;
}

/** A body: random JSON, or the documented fields of the operation filled with hostile values. */
export function bodyFor(schema: SchemaLike | undefined): fc.Arbitrary<unknown> {
  const names = Object.keys(schema?.properties ?? {});
  const shaped =
    names.length > 0
      ? fc.dictionary(fc.oneof(fc.constantFrom(...names), nastyString), nastyValue, {
          maxKeys: names.length + 2,
        })
      : fc.dictionary(nastyString, nastyValue, { maxKeys: 4 });
  return fc.oneof({ weight: 5, arbitrary: shaped }, { weight: 2, arbitrary: nastyValue });
}

/** What goes on the wire: a JSON text, raw bytes (invalid UTF-8 among them), or nothing. */
export type WireBody =
  | { kind: 'json'; value: unknown }
  | { kind: 'bytes'; bytes: Uint8Array }
  | { kind: 'none' };

export function wireBodyFor(schema: SchemaLike | undefined): fc.Arbitrary<WireBody> {
  return fc.oneof(
    { weight: 8, arbitrary: bodyFor(schema).map((value) => ({ kind: 'json', value }) as WireBody) },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom(
          Uint8Array.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]),
          Uint8Array.from([0xc0, 0xaf, 0xed, 0xa0, 0x80]),
          new TextEncoder().encode('{"a":'),
          new TextEncoder().encode('not json at all'),
          new Uint8Array(0),
        )
        .map((bytes) => ({ kind: 'bytes', bytes }) as WireBody),
    },
    {
      weight: 1,
      arbitrary: deepJsonText.map(
        (text) => ({ kind: 'bytes', bytes: new TextEncoder().encode(text) }) as WireBody,
      ),
    },
    { weight: 1, arbitrary: fc.constant({ kind: 'none' } as WireBody) },
  );
}

export const contentType = fc.oneof(
  { weight: 8, arbitrary: fc.constant('application/json') },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/json; charset=utf-16',
      'application/xml',
      '',
    ),
  },
);

/** A path parameter: usually garbage, sometimes a well-formed id that names nothing. */
export const pathParam = fc.oneof(
  { weight: 3, arbitrary: nastyString.filter((s) => s.length < 2000) },
  { weight: 2, arbitrary: fc.uuid() },
);

export const queryString = fc
  .dictionary(
    fc.oneof(
      fc.constantFrom('limit', 'offset', 'sort', 'order', 'search', 'status', 'filter', 'from', 'to'),
      nastyString,
    ),
    nastyString,
    {
      maxKeys: 4,
    },
  )
  .map((q) => {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(q)) params.append(k.slice(0, 200), v.slice(0, 2000));
    const text = params.toString();
    return text ? `?${text}` : '';
  });
