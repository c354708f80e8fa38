// The typed errors cross the worker seam as plain data (structured clone) and come back as their
// own classes, with the same message and detail: what makes `instanceof` answer alike in both modes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  BusyError,
  ContextLostError,
  DisposedError,
  WebGL2UnavailableError,
  fromRemote,
  toRemote,
} from '../../web/module/gpt2-errors.js';

test('every typed error survives toRemote, a structured clone and fromRemote as its own class', () => {
  const errors = [
    new ContextLostError(),
    new DisposedError(),
    new BusyError(),
    new WebGL2UnavailableError({ code: -1, browserSaid: 'no GPU here' }),
  ];
  for (const error of errors) {
    const back = fromRemote(structuredClone(toRemote(error)));
    assert.ok(back instanceof error.constructor, `${error.name} came back as ${back.constructor.name}`);
    assert.equal(back.message, error.message);
    assert.deepEqual(back.detail, error.detail);
  }
  assert.match(errors[3].message, /error -1\); .*\. The browser said: "no GPU here"$/);
});

test('an untyped error comes back as an Error with its message, an abort as an AbortError', () => {
  const plain = fromRemote(structuredClone(toRemote(new TypeError('model.safetensors: bad header'))));
  assert.equal(plain.constructor, Error);
  assert.equal(plain.message, 'model.safetensors: bad header');
  const aborted = fromRemote(structuredClone(toRemote(new DOMException('stopped', 'AbortError'))));
  assert.equal(aborted.name, 'AbortError');
  assert.equal(fromRemote({ name: 'toString', message: 'x' }).constructor, Error);
});
