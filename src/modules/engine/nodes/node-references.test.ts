/* biome-ignore-all lint/suspicious/noTemplateCurlyInString: the strings are JavaScript sources with template literals. */
import assert from 'node:assert/strict';
import test from 'node:test';
import { renameInJavaScript, renameInJsonata, renameInTemplates } from './node-references.js';

test('JSONata: $node.Name, backtick names, $node["..."] and $lookup are renamed', () => {
  assert.equal(renameInJsonata('$node.Read.data * 2', 'Read', 'Scaled'), '$node.Scaled.data * 2');
  assert.equal(renameInJsonata('$node.Read.data', 'Read', 'Read PLC'), '$node.`Read PLC`.data');
  assert.equal(renameInJsonata('$node.`Read PLC`.data', 'Read PLC', 'Press'), '$node.Press.data');
  assert.equal(
    renameInJsonata('$node["Read PLC"].data', 'Read PLC', 'Read "A"'),
    '$node["Read \\"A\\""].data',
  );
  assert.equal(renameInJsonata("$node['Read'].data", 'Read', 'Read 2'), "$node['Read 2'].data");
  assert.equal(renameInJsonata("$node['Read'].data", 'Read', "It's"), '$node["It\'s"].data');
  assert.equal(renameInJsonata('$lookup($node, "Read").data', 'Read', 'B'), '$lookup($node, "B").data');
  assert.equal(renameInJsonata('$node . /* c */ Read . data', 'Read', 'B'), '$node . /* c */ B . data');
});

test('JSONata: strings, comments, other variables, paths and longer names are left alone', () => {
  const cases = [
    '"$node.Read" & $node.ReadMore.data',
    "'$node.Read'",
    '/* $node.Read */ 1',
    '$nodes.Read',
    'node.Read',
    '$input.Read',
    '$node.Reader',
    '$other["Read"]',
    '$node.x.Read',
  ];
  for (const source of cases) assert.equal(renameInJsonata(source, 'Read', 'B'), source, source);
});

test('JSONata: a string holding an escaped quote does not end early', () => {
  const source = '"a \\" $node.Read" & $node.Read.data';
  assert.equal(renameInJsonata(source, 'Read', 'B'), '"a \\" $node.Read" & $node.B.data');
});

test('JavaScript: member access, computed keys, optional chaining and destructuring are renamed', () => {
  const js = (code: string, to = 'Scaled') => renameInJavaScript(code, 'Read', to).code;
  assert.equal(js('return $node.Read.data * 2;'), 'return $node.Scaled.data * 2;');
  assert.equal(js("return $node['Read'].data;"), 'return $node["Scaled"].data;');
  assert.equal(js('return $node[`Read`].data;'), 'return $node["Scaled"].data;');
  assert.equal(js('return $node?.Read?.data;'), 'return $node?.Scaled?.data;');
  assert.equal(js('return $node.Read.data;', 'Read PLC'), 'return $node["Read PLC"].data;');
  assert.equal(js('return $node?.Read;', 'Read PLC'), 'return $node?.["Read PLC"];');
  assert.equal(
    js('const { Read } = $node; return Read.data;'),
    'const { Scaled: Read } = $node; return Read.data;',
  );
  assert.equal(js('const { Read: r } = $node; return r;', 'A B'), 'const { "A B": r } = $node; return r;');
});

test('JavaScript: strings, comments, regular expressions, templates and other objects are left alone', () => {
  const cases = [
    'return "$node.Read";',
    '// $node.Read\nreturn 1;',
    '/* $node.Read */ return 1;',
    'return /\\$node.Read/.test(x);',
    'return `${1} $node.Read`;',
    'return $input.Read;',
    'const node = {}; return node.Read;',
    'return $node.Reader;',
    'return $node[name];',
    'return $node[`Re${"ad"}`];',
  ];
  for (const code of cases) assert.equal(renameInJavaScript(code, 'Read', 'B').code, code, code);
  const inTemplate = renameInJavaScript('return `${$node.Read.data} units`;', 'Read', 'B');
  assert.equal(inTemplate.code, 'return `${$node.B.data} units`;');
});

test('JavaScript that does not parse is left unchanged and says so', () => {
  assert.deepEqual(renameInJavaScript('return $node.Read.data +;', 'Read', 'B'), {
    code: 'return $node.Read.data +;',
    parsed: false,
  });
});

test('templates: only whole {{ expr }} strings are expressions, at any depth', () => {
  assert.deepEqual(
    renameInTemplates(
      { a: '{{ $node.Read.data }}', b: ['x', ' {{$node["Read"]}} '], c: '$node.Read', d: 3 },
      'Read',
      'B',
    ),
    { a: '{{ $node.B.data }}', b: ['x', ' {{$node["B"]}} '], c: '$node.Read', d: 3 },
  );
});

test('nested members named expression are JSONata (a switch rule), other strings are not', () => {
  assert.deepEqual(
    renameInTemplates(
      [
        { expression: '$node.Read.data > 1', value: '$node.Read' },
        { operator: 'eq', compare: '{{ $node.Read.data }}' },
      ],
      'Read',
      'B',
    ),
    [
      { expression: '$node.B.data > 1', value: '$node.Read' },
      { operator: 'eq', compare: '{{ $node.B.data }}' },
    ],
  );
});
