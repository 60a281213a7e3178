import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  describeJsonType,
  inputError,
  isPlainObject,
  quoteInput,
  UnsBatchError,
  UnsInputError,
} from './uns-errors.js';

describe('UnsInputError', () => {
  it('carries the field and a message that starts with it', () => {
    const error = inputError('topic', 'is required');
    assert.deepEqual(
      [error instanceof Error, error.name, error.field, error.message],
      [true, 'UnsInputError', 'topic', 'topic is required'],
    );
  });
});

describe('UnsBatchError', () => {
  it('is an UnsInputError on field records holding every record error', () => {
    const errors = [{ index: 2, field: 'records[2].topic', message: 'records[2].topic is required' }];
    const error = new UnsBatchError(errors, 5);
    assert.ok(error instanceof UnsInputError);
    assert.deepEqual([error.name, error.field, error.errors], ['UnsBatchError', 'records', errors]);
    assert.equal(error.message, '1 of 5 records refused, nothing stored: records[2].topic is required');
  });
});

describe('quoteInput', () => {
  it('quotes short input whole', () => assert.equal(quoteInput('unit'), '"unit"'));

  it('cuts long input to 60 characters and marks the cut', () => {
    assert.equal(quoteInput('x'.repeat(1000)), `"${'x'.repeat(60)}…"`);
  });

  it('escapes quotes and control characters so a message stays one line', () => {
    assert.equal(quoteInput('a"b\nc'), '"a\\"b\\nc"');
  });
});

describe('describeJsonType', () => {
  it('names every JSON type', () => {
    assert.deepEqual([null, [], 1, 's', true, {}].map(describeJsonType), [
      'null',
      'an array',
      'a number',
      'a string',
      'a boolean',
      'an object',
    ]);
  });
});

describe('isPlainObject', () => {
  it('accepts object literals and null-prototype objects', () => {
    assert.deepEqual([isPlainObject({}), isPlainObject(Object.create(null))], [true, true]);
  });

  it('refuses arrays, null, dates and class instances', () => {
    assert.deepEqual([[], null, new Date(), new (class {})()].map(isPlainObject), [
      false,
      false,
      false,
      false,
    ]);
  });
});
