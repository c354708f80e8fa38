// One contract for both modes: the same misuse of a model gets the same answers whether the engine
// runs in the module's Worker or on the page's thread (what WebKit users get). `misuseCheck` runs in
// a page (page.evaluate); `assertMisuseAnswers` checks what it returned.
import assert from 'node:assert/strict';

// One model used as a hurried page would: two generations started at once, a dispose during a
// generation, an abort during a load, a bad option, then a normal generation. Both modes must answer
// alike (assertMisuseAnswers).
export async function misuseCheck({ options }) {
  const { GPT2, BusyError, DisposedError } = await import('/gpt2.js');
  // Which of the module's error classes an error is an instance of (null: none of them).
  const errorClass = (e) =>
    e instanceof BusyError ? 'BusyError' : e instanceof DisposedError ? 'DisposedError' : null;
  const collect = async (tokens) => {
    const ids = [];
    try {
      for await (const t of tokens) ids.push(t.id);
      return { ids };
    } catch (e) {
      return { ids, error: e.message, errorClass: errorClass(e) };
    }
  };
  const greedy = { maxNewTokens: 8, stopAtEndOfText: false };
  const model = await GPT2.load('/models/default/', { backend: 'webgl', ...options });
  const out = { mode: model.mode };
  const [first, second] = await Promise.all([
    collect(model.generate('The jury said that', greedy)),
    collect(model.generate('The jury said that', greedy)),
  ]);
  out.concurrent = { first, second };
  out.alone = await collect(model.generate('The jury said that', greedy));

  const doomed = await GPT2.load('/models/default/', { backend: 'webgl', ...options });
  let seen = 0;
  out.disposedDuring = await collect(
    (async function* disposing() {
      for await (const t of doomed.generate('The jury said that', { maxNewTokens: 200, stopAtEndOfText: false })) {
        seen += 1;
        if (seen === 2) await doomed.dispose();
        yield t;
      }
    })(),
  );
  out.disposedLater = await doomed.tokenize('x').then(
    () => 'no error',
    (e) => `${errorClass(e)}: ${e.message}`,
  );

  // An abort from a progress event rejects the load whatever the engine had done by then: in worker
  // mode the worker may have loaded the model and replied before it hears of the abort (the page
  // then disposes the model), so this answer does not depend on timing.
  const controller = new AbortController();
  out.abortedLoad = await GPT2.load('/models/default/', {
    backend: 'webgl',
    ...options,
    cache: false,
    signal: controller.signal,
    onProgress: ({ loaded }) => {
      if (loaded > 0) controller.abort();
    },
  }).then(
    async (m) => {
      await m.dispose();
      return 'loaded';
    },
    (e) => e.name,
  );

  out.badOption = await collect(model.generate('The jury', { maxNewTokens: 2, temperatur: 1 }));
  out.after = await collect(model.generate('The jury said that', greedy));
  await model.dispose();
  out.liveGlObjects = await GPT2.liveGlObjects();
  return out;
}

export function assertMisuseAnswers(r, { worker }) {
  assert.equal(r.mode.worker, worker, JSON.stringify(r.mode));
  assert.equal(r.alone.error, undefined, r.alone.error);
  assert.equal(r.alone.ids.length, 8);
  // The first generation completes with the right tokens; the second is refused before any.
  assert.deepEqual(r.concurrent.first, r.alone, JSON.stringify(r.concurrent));
  assert.deepEqual(r.concurrent.second, {
    ids: [],
    error: 'this model is generating; abort that generation or wait for it',
    errorClass: 'BusyError',
  });
  // A dispose ends the generation under way with a clear error, and every later call.
  assert.equal(r.disposedDuring.error, 'this model has been disposed');
  assert.equal(r.disposedDuring.errorClass, 'DisposedError');
  assert.ok(
    r.disposedDuring.ids.length >= 2 && r.disposedDuring.ids.length < 200,
    `${r.disposedDuring.ids.length} tokens`,
  );
  assert.equal(r.disposedLater, 'DisposedError: this model has been disposed');
  assert.equal(r.abortedLoad, 'AbortError');
  assert.equal(r.badOption.ids.length, 0);
  assert.match(r.badOption.error, /^generate: unknown option temperatur; known: /);
  assert.equal(r.badOption.errorClass, null, 'a bad option is none of the classes a page acts on');
  assert.deepEqual(r.after, r.alone);
  assert.equal(r.liveGlObjects, 0, 'every model of the check was disposed');
}
