import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { UnsInputError } from '../uns-errors.js';
import { depthOf, nameOf, parentOf, parseTopicPath } from './topic-path.js';
import {
  describeTopicPrefixProblem,
  MAX_SEGMENT_CHARS,
  MAX_TOPIC_BYTES,
  MAX_TOPIC_SEGMENTS,
} from './topic-text.js';

const P = 'v1';

function refuses(topic: unknown, message: RegExp, field = 'topic'): void {
  assert.throws(() => parseTopicPath(topic, P, field), { name: 'UnsInputError', field, message });
}

function topicOf(count: number, segment = 'a'): string {
  return [P, ...Array.from({ length: count - 1 }, () => segment)].join('/');
}

describe('parseTopicPath', () => {
  it('returns the path, every segment with the prefix first, and the ancestor nodes', () => {
    assert.deepEqual(parseTopicPath('v1/a/b/c', P), {
      path: 'v1/a/b/c',
      segments: ['v1', 'a', 'b', 'c'],
      parentPaths: ['v1/a', 'v1/a/b'],
    });
  });

  it('lists the one top-level node as the parent of a two-segment topic', () => {
    assert.deepEqual(parseTopicPath('v1/plant/temp', P).parentPaths, ['v1/plant']);
  });

  it('accepts a configured prefix other than v1', () => {
    assert.equal(parseTopicPath('uns2/a/b', 'uns2').path, 'uns2/a/b');
  });

  it('accepts spaces, dots, dollar signs and non-ASCII letters inside segments', () => {
    const topic = 'v1/Werk Süd/Linie.1/$temp/温度/🌡';
    assert.deepEqual(parseTopicPath(topic, P).segments.slice(1), [
      'Werk Süd',
      'Linie.1',
      '$temp',
      '温度',
      '🌡',
    ]);
  });

  for (const [name, char] of [
    ['a zero-width space', '\u200B'],
    ['a zero-width joiner', '\u200D'],
    ['a right-to-left override', '\u202E'],
    ['a left-to-right isolate', '\u2066'],
    ['a byte order mark', '\uFEFF'],
    ['a soft hyphen', '\u00AD'],
  ] as const) {
    it(`refuses ${name} (a format character) in a segment`, () => {
      const code = char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0');
      refuses(`v1/plant/te${char}mp`, new RegExp(`format characters \\(U\\+${code} at position 11\\)`));
    });
  }

  for (const [name, char, what] of [
    ['a line separator', '\u2028', 'line or paragraph separators'],
    ['a paragraph separator', '\u2029', 'line or paragraph separators'],
    ['a no-break space', '\u00A0', 'spaces other than U\\+0020'],
    ['an ideographic space', '\u3000', 'spaces other than U\\+0020'],
    ['a variation selector', '\uFE0F', 'invisible characters'],
    ['a Hangul filler', '\u3164', 'invisible characters'],
    ['a combining grapheme joiner', '\u034F', 'invisible characters'],
  ] as const) {
    it(`refuses ${name} in a segment`, () => {
      const code = char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0');
      refuses(
        `v1/plant/te${char}mp`,
        new RegExp(`^topic must not contain ${what} \\(U\\+${code} at position 11\\)$`),
      );
    });
  }

  it('refuses a segment mixing Latin with Cyrillic or Greek lookalikes, naming the segment and the scripts', () => {
    refuses('v1/plant/pump\u0435/temp', /^topic segment 3 mixes Latin and Cyrillic \("pumpе"\); /);
    refuses('v1/\u0440\u0443mp/a', /^topic segment 2 mixes Cyrillic and Latin/);
    refuses('v1/plant/m\u03BFtor', /^topic segment 3 mixes Latin and Greek/);
    refuses('v1/plant/\u0437\u03B1\u0432\u043E\u0434', /^topic segment 3 mixes Cyrillic and Greek/);
    // Two other scripts besides Latin, and a script that is not in common use (Cherokee Ꭺ looks like A).
    refuses('v1/plant/abc\u05D0\u0627', /^topic segment 3 mixes Latin, Hebrew and Arabic/);
    refuses('v1/plant/\u13AAbc', /^topic segment 3 mixes Cherokee and Latin/);
  });

  it('accepts one script per segment and the mixes TR39 allows at Moderately Restrictive', () => {
    for (const topic of [
      'v1/заводе/линия/температура',
      'v1/Ἀθῆναι/γραμμή',
      'v1/plant/Line1_خط',
      'v1/plant/Linie_קו',
      'v1/plant/Pumpe_ポンプ_温度',
      'v1/plant/台北_ㄅ_Line',
      'v1/plant/한국_Line_漢',
      'v1/plant/x\u3001y',
      'v1/plant/Ꭺ_Ꮃ',
      // Digits and punctuation go with any script, and combining marks with the letter before them.
      'v1/завод-1/линия_2',
      'v1/plant/q\u0307-1',
    ]) {
      assert.equal(parseTopicPath(topic, P).path, topic);
    }
  });

  it('refuses a topic not in NFC and accepts its composed form', () => {
    refuses('v1/plant/cafe\u0301', /normalization form NFC/);
    assert.equal(parseTopicPath('v1/plant/caf\u00E9', P).segments[2], 'café');
  });

  it('refuses a missing topic as required', () => refuses(undefined, /^topic is required$/));

  it('refuses null as not a string', () => refuses(null, /^topic must be a string, not null$/));

  it('refuses a number as not a string', () => refuses(42, /^topic must be a string, not a number$/));

  it('refuses an empty string', () => refuses('', /^topic must not be empty$/));

  it('refuses a topic without the version prefix', () => {
    refuses('plant/line/temp', /^topic must start with the version prefix "v1"/);
  });

  it('compares the prefix case-sensitively', () =>
    refuses('V1/a/b', /must start with the version prefix "v1"/));

  it('refuses a prefix that is only the start of the first segment', () => {
    refuses('v10/a/b', /must start with the version prefix/);
  });

  it('refuses the prefix alone', () => refuses('v1', /must have at least two segments after the prefix/));

  it('refuses one segment after the prefix', () =>
    refuses('v1/a', /must have at least two segments after the prefix/));

  for (const topic of ['/v1/a/b', 'v1/a/b/', 'v1//a/b', 'v1/a//b', 'v1/a/b//']) {
    it(`refuses the empty segment in ${JSON.stringify(topic)}`, () =>
      refuses(topic, /must not contain an empty segment/));
  }

  for (const topic of ['v1/a/+/c', 'v1/a/#', 'v1/a+/b', 'v1/a/b#', '+/a/b', 'v1/#/b']) {
    it(`refuses the wildcard in ${JSON.stringify(topic)}`, () => {
      refuses(topic, /^topic must not contain the MQTT wildcards "\+" or "#"$/);
    });
  }

  it('refuses every C0 control character, DEL and every C1 control character', () => {
    const codes = [
      ...Array.from({ length: 0x20 }, (_, i) => i),
      ...Array.from({ length: 0x21 }, (_, i) => 0x7f + i),
    ];
    assert.equal(codes.length, 65);
    for (const code of codes) {
      const topic = `v1/a/b${String.fromCharCode(code)}c`;
      const hex = code.toString(16).toUpperCase().padStart(4, '0');
      assert.throws(() => parseTopicPath(topic, P), {
        field: 'topic',
        message: new RegExp(`^topic must not contain control characters \\(U\\+${hex} at position 6\\)$`),
      });
    }
  });

  it('accepts the characters just outside the control ranges', () => {
    // U+00A0 (no-break space), the first after C1, is refused as a space other than U+0020 (below).
    for (const char of [' ', '~', '\u00a1', '\u00ff'])
      assert.equal(parseTopicPath(`v1/a/${char}`, P).segments[2], char);
  });

  it('refuses a lone high surrogate', () => refuses('v1/a/\ud800', /must be valid Unicode \(lone surrogate/));

  it('refuses a lone low surrogate', () => refuses('v1/a/\udc00b', /must be valid Unicode \(lone surrogate/));

  it('refuses a reversed surrogate pair', () => refuses('v1/a/\udc00\ud800', /lone surrogate/));

  it(`accepts ${MAX_TOPIC_SEGMENTS} segments including the prefix`, () => {
    assert.equal(parseTopicPath(topicOf(MAX_TOPIC_SEGMENTS), P).segments.length, MAX_TOPIC_SEGMENTS);
  });

  it(`refuses ${MAX_TOPIC_SEGMENTS + 1} segments as too deep`, () => {
    refuses(topicOf(MAX_TOPIC_SEGMENTS + 1), /^topic must have at most 32 segments including the prefix$/);
  });

  it(`accepts a segment of ${MAX_SEGMENT_CHARS} characters`, () => {
    assert.equal(
      parseTopicPath(`v1/a/${'x'.repeat(MAX_SEGMENT_CHARS)}`, P).segments[2]?.length,
      MAX_SEGMENT_CHARS,
    );
  });

  it(`refuses a segment of ${MAX_SEGMENT_CHARS + 1} characters and names its position`, () => {
    refuses(
      `v1/a/${'x'.repeat(MAX_SEGMENT_CHARS + 1)}`,
      /^topic segment 3 must be at most 128 characters \(got 129\)$/,
    );
  });

  it('counts segment length in code points, not UTF-16 units', () => {
    const emoji = '😀'.repeat(MAX_SEGMENT_CHARS); // 256 UTF-16 units, 512 bytes
    assert.equal(parseTopicPath(`v1/a/${emoji}`, P).segments[2], emoji);
  });

  it(`accepts exactly ${MAX_TOPIC_BYTES} bytes`, () => {
    const topic = `v1/${Array.from({ length: 7 }, () => 'x'.repeat(127)).join('/')}/${'x'.repeat(125)}`;
    assert.equal(Buffer.byteLength(topic), MAX_TOPIC_BYTES);
    assert.equal(parseTopicPath(topic, P).path, topic);
  });

  it('refuses 1025 bytes', () => {
    const topic = `v1/${Array.from({ length: 7 }, () => 'x'.repeat(127)).join('/')}/${'x'.repeat(126)}`;
    assert.equal(Buffer.byteLength(topic), MAX_TOPIC_BYTES + 1);
    refuses(topic, /^topic must be at most 1024 bytes as UTF-8 \(got 1025 or more\)$/);
  });

  it('refuses more than 1024 bytes of UTF-8 even when under 1024 UTF-16 units', () => {
    const topic = `v1/${Array.from({ length: 6 }, () => 'é'.repeat(100)).join('/')}`;
    assert.ok(topic.length < MAX_TOPIC_BYTES);
    assert.equal(Buffer.byteLength(topic), 1208);
    refuses(topic, /^topic must be at most 1024 bytes as UTF-8 \(got 1208\)$/);
  });

  it('refuses a huge string without quoting it', () => {
    const topic = `v1/a/${'x'.repeat(1_000_000)}`;
    assert.throws(
      () => parseTopicPath(topic, P),
      (error: unknown) =>
        error instanceof UnsInputError && error.message.length < 120 && /1024 bytes/.test(error.message),
    );
  });

  it('names the given field in a batch', () => {
    refuses('x/a/b', /^records\[3\]\.topic must start with/, 'records[3].topic');
  });
});

describe('parentOf, depthOf, nameOf', () => {
  it('gives the parent node of a nested node', () => assert.equal(parentOf('v1/a/b/c'), 'v1/a/b'));

  it('gives null for a top-level node, whose parent is the root prefix', () =>
    assert.equal(parentOf('v1/a'), null));

  it('gives null for the prefix itself', () => assert.equal(parentOf('v1'), null));

  it('counts depth below the prefix', () => {
    assert.deepEqual(['v1/a', 'v1/a/b', 'v1/a/b/c'].map(depthOf), [1, 2, 3]);
  });

  it('gives the last segment as the name', () => assert.equal(nameOf('v1/a/b/temp'), 'temp'));

  it('walks from a topic to its top-level node through parentPaths', () => {
    const { path, parentPaths } = parseTopicPath('v1/a/b/c/d', P);
    const chain: string[] = [];
    for (let p = parentOf(path); p !== null; p = parentOf(p)) chain.unshift(p);
    assert.deepEqual(chain, parentPaths);
  });
});

describe('describeTopicPrefixProblem', () => {
  it('accepts v1', () => assert.equal(describeTopicPrefixProblem('v1'), null));

  it('refuses an empty prefix', () =>
    assert.match(describeTopicPrefixProblem('') ?? '', /must not be empty/));

  it('refuses a prefix with a slash', () =>
    assert.match(describeTopicPrefixProblem('a/b') ?? '', /one segment/));

  it('refuses a prefix starting with $', () =>
    assert.match(describeTopicPrefixProblem('$v1') ?? '', /reserved/));

  it('refuses a prefix with a wildcard', () =>
    assert.match(describeTopicPrefixProblem('v+') ?? '', /wildcards/));

  it('refuses a prefix over 128 characters', () => {
    assert.match(describeTopicPrefixProblem('v'.repeat(129)) ?? '', /at most 128 characters/);
  });
});
