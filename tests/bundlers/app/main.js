// An app as a user writes it: the package imported by its name, a model loaded, a few tokens
// generated. The page's query gives the model, the prompt's ids, the backend (default webgl) and, for
// apps whose bundler does not place the package's worker and wasm itself, where they are. The outcome
// goes to window.result.
import { GPT2 } from 'gpt2-webgl';

async function run() {
  const query = new URLSearchParams(location.search);
  const files = Object.fromEntries(['workerUrl', 'wasmUrl'].filter((k) => query.has(k)).map((k) => [k, query.get(k)]));
  const warnings = [];
  const model = await GPT2.load(query.get('model'), {
    backend: query.get('backend') ?? 'webgl',
    weights: 'fp32',
    ...files,
    onProgress: ({ warning }) => warning && warnings.push(warning),
  });
  const ids = [];
  for await (const token of model.generate(JSON.parse(query.get('prompt')), {
    maxNewTokens: 3,
    stopAtEndOfText: false,
  })) {
    ids.push(token.id);
    document.getElementById('out').textContent += token.text;
  }
  const { renderer } = await model.stats();
  await model.dispose();
  return { ids, mode: { ...model.mode }, renderer, warnings };
}

run().then(
  (result) => {
    window.result = result;
  },
  (error) => {
    window.result = { error: String(error?.message ?? error) };
  },
);
