// Long runs on a real GPU, in each mode: `tokens` tokens generated with the window sliding, `cycles`
// load/dispose cycles, and a context lost in the middle of a generation, then restore() and the
// generation continued. Each posts rows of what must stay flat (the module's own GPU byte count, live
// GL objects, the wasm heap, the JS heap after a GC where the browser exposes one) at the start,
// middle and end. The SwiftShader versions with assertions are tests/browser/reliability.test.mjs.
// Query: model (URL), tokens (default 10000), cycles (default 100), modes (worker,same-thread), post=1.
const query = new URLSearchParams(location.search);
const { GPT2, ContextLostError } = await import(query.get('module') ?? '/gpt2.js');
const post = (stage, body) => fetch(`/result?stage=${stage}`, { method: 'POST', body: JSON.stringify(body) });

// What must stay flat, now; `model` (optional) adds its own GPU bytes and wasm heap.
async function sample(run, worker, at, model) {
  globalThis.gc?.();
  const stats = model ? await model.stats() : null;
  const row = {
    run,
    worker,
    at,
    glObjects: await GPT2.liveGlObjects(),
    jsHeapBytes: performance.memory?.usedJSHeapSize ?? null,
    gpuBytes: stats?.gpuBytes ?? null,
    wasmHeapBytes: stats?.wasmHeapBytes ?? null,
    renderer: stats?.renderer ?? null,
  };
  await post('row', row);
  return row;
}

async function slidingWindow(source, worker, tokens) {
  const model = await GPT2.load(source, { worker });
  await sample('tokens', worker, 0, model);
  const start = performance.now();
  let count = 0;
  for await (const token of model.generate([1, 2, 3], {
    maxNewTokens: tokens,
    temperature: 1,
    seed: 3,
    stopAtEndOfText: false,
  })) {
    void token;
    count += 1;
    if (count === tokens / 2) await sample('tokens', worker, count, model);
  }
  const end = await sample('tokens', worker, count, model);
  await post('row', {
    run: 'tokens',
    worker,
    generated: count,
    ms_per_token: (performance.now() - start) / count,
    context: model.config.n_positions,
  });
  await model.dispose();
  return end;
}

async function loadCycles(source, worker, cycles) {
  await sample('cycles', worker, 0);
  for (let i = 1; i <= cycles; i += 1) {
    const model = await GPT2.load(source, { worker });
    for await (const token of model.generate([1], { maxNewTokens: 2 })) void token;
    if (i === 1 || i === cycles / 2 || i === cycles) await sample('cycles (loaded)', worker, i, model);
    await model.dispose();
    if (i === cycles / 2 || i === cycles) await sample('cycles', worker, i);
  }
}

// Worker mode loses the worker's context (simulateContextLoss); same-thread mode a canvas of the
// page's, as a browser would. restore() reloads on a fresh canvas; the generation goes on from the
// tokens it had.
async function contextLoss(source, worker) {
  const canvas = worker ? undefined : document.body.appendChild(document.createElement('canvas'));
  const model = await GPT2.load(source, { worker, canvas });
  await sample('context loss', worker, 'before', model);
  const ids = [1, 2, 3];
  let error = null;
  try {
    for await (const token of model.generate(ids, {
      maxNewTokens: 40,
      temperature: 1,
      seed: 5,
      stopAtEndOfText: false,
    })) {
      ids.push(token.id);
      if (ids.length === 13) {
        if (worker) await model.simulateContextLoss();
        else canvas.getContext('webgl2').getExtension('WEBGL_lose_context').loseContext();
      }
    }
  } catch (e) {
    error = e;
  }
  await post('row', {
    run: 'context loss',
    worker,
    rejectedWith: error?.name ?? null,
    contextLostError: error instanceof ContextLostError,
    tokensBefore: ids.length - 3,
  });
  await model.restore();
  await sample('context loss', worker, 'restored', model);
  let more = 0;
  for await (const token of model.generate(ids, {
    maxNewTokens: 40,
    temperature: 1,
    seed: 5,
    stopAtEndOfText: false,
  })) {
    void token;
    more += 1;
  }
  await sample('context loss', worker, 'continued', model);
  await post('row', { run: 'context loss', worker, tokensAfterRestore: more });
  await model.dispose();
  canvas?.remove();
}

if (query.get('post') === '1') {
  try {
    const source = query.get('model');
    const tokens = Number(query.get('tokens') ?? 10000);
    const cycles = Number(query.get('cycles') ?? 100);
    for (const worker of (query.get('modes') ?? 'worker,same-thread').split(',').map((m) => m === 'worker')) {
      await slidingWindow(source, worker, tokens);
      await loadCycles(source, worker, cycles);
      await contextLoss(source, worker);
    }
  } catch (error) {
    await post('error', { message: error.message, stack: error.stack });
  }
  await post('done', {});
}
