// The demo page: load a model with progress, stream tokens with tokens/s, and look inside the model
// (demo-views.js): the logit lens and attention follow generation live, and hovering a generated
// token shows its probability and the alternatives. The model runs in the module's Worker (the
// default), so typing stays smooth while it generates. All generated or model-provided text goes
// into the page as text (textContent), never as HTML.
import { GPT2 } from './gpt2.js';
import { DemoInterventions } from './demo-interventions.js';
import { AttentionMap, LensGrid } from './demo-views.js';
import { DEMO_LENS_TOP_K, DEMO_SAMPLING } from './demo-settings.js';

// The model picker: the bundled model (the default; served with the page, so it works offline), GPT-2
// of every size as GGUF files that the community publishes on the Hugging Face hub (4-bit, a tenth of
// fp32's download), and the official fp32 checkpoints. Each entry names its repository and its
// download size as the hub lists it. The module plans each one's GPU memory before any download: the
// folders from the shapes of their config.json (the bundled model's is read from the page's own
// copy), a GGUF file from its header (gpuBytes reads about 2 MB of it).
const official = (n_embd, n_layer, n_head) => ({
  model_type: 'gpt2',
  vocab_size: 50257,
  n_positions: 1024,
  n_embd,
  n_layer,
  n_head,
});
const gguf = (size, parameters, repository, file, bytes, cpu = false) => ({
  value: `${repository}/${file}`,
  source: `${repository}/${file}`,
  label: `GPT-2 ${size}, ${/\.(\w+)\.gguf$/i.exec(file)[1]} GGUF from ${repository}`,
  parameters,
  bytes,
  file: true,
  cpu,
});
const folder = (size, parameters, repository, bytes, config) => ({
  value: repository,
  source: repository,
  label: `GPT-2 ${size}, fp32 safetensors from ${repository}`,
  parameters,
  bytes,
  config,
});
const MODELS = [
  {
    value: 'bundled',
    source: 'models/default/',
    label: 'Bundled demo model (7.7M parameters)',
    parameters: 7.7e6,
    bytes: 15.4e6,
    cpu: true,
  },
  gguf('124M', 124e6, 'QuantFactory/gpt2-GGUF', 'gpt2.Q4_K_M.gguf', 113e6, true),
  gguf('124M', 124e6, 'QuantFactory/gpt2-GGUF', 'gpt2.Q8_0.gguf', 137e6, true),
  gguf('355M', 355e6, 'mradermacher/gpt2-medium-GGUF', 'gpt2-medium.Q4_K_M.gguf', 271e6),
  gguf('774M', 774e6, 'RichardErkhov/openai-community_-_gpt2-large-gguf', 'gpt2-large.Q4_K_M.gguf', 546e6),
  gguf('1.5B', 1.56e9, 'RichardErkhov/openai-community_-_gpt2-xl-gguf', 'gpt2-xl.Q4_0.gguf', 969e6),
  gguf('1.5B', 1.56e9, 'RichardErkhov/openai-community_-_gpt2-xl-gguf', 'gpt2-xl.Q4_K_M.gguf', 1.19e9),
  folder('124M', 124e6, 'openai-community/gpt2', 548e6, official(768, 12, 12)),
  folder('355M', 355e6, 'openai-community/gpt2-medium', 1.52e9, official(1024, 24, 16)),
  folder('774M', 774e6, 'openai-community/gpt2-large', 3.25e9, official(1280, 36, 20)),
  folder('1.5B', 1.56e9, 'openai-community/gpt2-xl', 6.43e9, official(1600, 48, 25)),
];
// `?hub=URL` takes the hub's files from a mirror of it (or a local stand-in) instead; `?backend=cpu`
// (or webgl) presets what runs the model.
const query = new URLSearchParams(location.search);
const HUB = query.get('hub');
const hubOptions = HUB ? { hubUrl: HUB } : {};
if (query.get('backend')) document.getElementById('backend').value = query.get('backend');
// A tab on iOS is killed near this much memory (WebKit bug 268816).
const PHONE_TAB_BYTES = 1.5e9;
const $ = (id) => document.getElementById(id);

const LENS_TOP_K = DEMO_LENS_TOP_K; // alternatives the live lens keeps per layer and position
$('temperature').value = String(DEMO_SAMPLING.temperature);
$('top-k').value = String(DEMO_SAMPLING.topK);
$('top-p').value = String(DEMO_SAMPLING.topP);
$('repetition-penalty').value = String(DEMO_SAMPLING.repetitionPenalty);

let model = null;
let controller = null;
let sequence = []; // ids of the last prompt + generation
const tokenTexts = new Map(); // id -> text, per model
const lensGrid = new LensGrid($('lens-grid'), tokenText, (text) => {
  $('lens-info').textContent = text;
});
const attentionMap = new AttentionMap($('heatmap'), (text) => {
  $('heatmap-tooltip').textContent = text;
});
const interventions = new DemoInterventions({
  heads: $('head-buttons'),
  ablated: $('interventions-summary'),
  clear: $('clear-ablations'),
  plus: $('steer-plus'),
  minus: $('steer-minus'),
  layer: $('steer-layer'),
  scale: $('steer-scale'),
  scaleShown: $('steer-scale-shown'),
});
let lastInterventions = []; // the list the current sequence ran with: attention() runs with it too
let tokenInfo = []; // per generated token: { id, ids, probs } of the model's own top-k where it was chosen
let drawPending = false;

async function tokenText(id) {
  if (!tokenTexts.has(id)) tokenTexts.set(id, await model.decode([id]));
  return tokenTexts.get(id);
}

// Load errors show next to the Load button; the others beside the generated text.
function showError(error, where = 'error') {
  const box = $(where);
  box.textContent = error ? `Error: ${error.message ?? error}` : '';
  box.hidden = !error;
  if (error) console.error(error);
}

function setBusy(busy) {
  $('generate').disabled = busy || !model;
  $('stop').disabled = !busy;
  $('load').disabled = busy;
  $('show-attention').disabled = busy || !model || sequence.length === 0;
  $('live-views').disabled = busy;
  $('layer').disabled = busy;
}

function megabytes(bytes) {
  return bytes >= 1e9 ? `${(bytes / 1e9).toFixed(2)} GB` : `${(bytes / 1e6).toFixed(1)} MB`;
}

// A download size to the three figures the hub lists it with.
function downloadSize(bytes) {
  return bytes >= 1e9 ? `${(bytes / 1e9).toPrecision(3)} GB` : `${(bytes / 1e6).toPrecision(3)} MB`;
}

// The load options the picker's figures depend on: what runs the model, the chosen weights and K/V
// cache (WebGL2's: the CPU keeps weights as the file stores them).
function memoryOptions() {
  const backend = $('backend').value;
  if (runsOn?.backend === 'cpu') return { backend };
  return { backend, weights: $('weights').value, kvCache: $('kv-cache').value };
}

// Where the chosen backend runs the model (GPT2.plannedMode). On the CPU the page says so and why, and
// offers the models usable there (the entries marked `cpu`: the bundled model, GPT-2 124M at 4 and
// 8 bits).
let runsOn = null;
async function planMode() {
  runsOn = await GPT2.plannedMode({ backend: $('backend').value, ...hubOptions });
  const cpu = runsOn.backend === 'cpu';
  $('backend-note').textContent = cpu ? `Runs on the CPU: ${runsOn.backendReason}.` : '';
  $('backend-note').hidden = !cpu;
  for (const id of ['weights', 'kv-cache']) $(id).disabled = cpu;
}

// GPU bytes of each picker entry with the chosen memory options, planned by the module for this
// browser. The entries with a config are planned together at once. A GGUF file's plan reads its
// header from the hub, so those wait until the picker is first used (on a phone, where the picker
// suggests a model, until the first model has loaded), go one at a time, and fill the picker again
// as each arrives. Where the browser cannot plan (no WebGL2) or a file cannot be read, the entry goes
// without the figure: the load then shows why.
const plans = new Map(); // JSON of the options and the entry's value -> the promise of its bytes
const planned = new Map(); // the same keys -> the bytes (null: not planned), once settled
let planFiles = false;
let filePlans = Promise.resolve();

// The GPU bytes of MODELS `entries`, or nulls where they could not be planned.
async function plan(entries, options) {
  try {
    return await GPT2.gpuBytes(
      entries.map((m) => m.config ?? m.source),
      { ...options, ...hubOptions },
    );
  } catch (error) {
    console.warn(`GPU memory could not be planned for ${entries.map((m) => m.label).join('; ')}: ${error.message}`);
    return entries.map(() => null);
  }
}

// { gpu: bytes per MODELS entry (null: not known), settled: whether every entry's plan has settled }.
async function plannedBytes(options) {
  const key = (m) => `${JSON.stringify(options)} ${m.value}`;
  MODELS[0].config ??= await (await fetch(new URL('config.json', new URL(MODELS[0].source, location.href)))).json();
  const configs = MODELS.filter((m) => m.config);
  const unplanned = configs.filter((m) => !plans.has(key(m)));
  if (unplanned.length > 0) {
    const batch = plan(unplanned, options);
    for (const [i, m] of unplanned.entries())
      plans.set(
        key(m),
        batch.then((bytes) => bytes[i]),
      );
  }
  for (const m of configs) planned.set(key(m), await plans.get(key(m)));
  if (planFiles)
    for (const m of MODELS.filter((m) => m.file && !plans.has(key(m)))) {
      filePlans = filePlans
        .then(async () => {
          planned.set(key(m), (await plan([m], options))[0]);
          await fillPicker();
        })
        .catch((error) => showError(error, 'load-error'));
      plans.set(key(m), filePlans);
    }
  return { gpu: MODELS.map((m) => planned.get(key(m)) ?? null), settled: MODELS.every((m) => planned.has(key(m))) };
}

// On a phone, once every plan has settled, the largest model whose GPU memory a tab survives, by the
// smallest download among its files; null elsewhere.
function suggestion({ gpu, settled }) {
  if (!GPT2.isPhone() || !settled) return null;
  const fitting = MODELS.filter((_, i) => gpu[i] !== null && gpu[i] <= PHONE_TAB_BYTES);
  fitting.sort((a, b) => b.parameters - a.parameters || a.bytes - b.bytes);
  return fitting[0] ?? null;
}

// Fills the picker, marking the models the browser has cached, with each one's download and the
// GPU memory it takes with the chosen weights and K/V cache (flagged where a phone's tab would not
// survive it, and on a phone the largest that fits suggested); keeps the current choice.
async function fillPicker() {
  const select = $('model-source');
  const chosen = select.value || 'bundled';
  const cached = new Set((await GPT2.cachedModels()).map((m) => m.source));
  const figures = await plannedBytes(memoryOptions());
  const { gpu } = figures;
  const suggested = suggestion(figures);
  const cpu = runsOn?.backend === 'cpu';
  select.replaceChildren(
    ...MODELS.flatMap((m, i) =>
      cpu && !m.cpu
        ? []
        : new Option(
            `${m.label}, ${downloadSize(m.bytes)} download` +
              `${gpu[i] === null ? '' : `, ${megabytes(gpu[i])} of ${cpu ? '' : 'GPU '}memory`}` +
              `${gpu[i] > PHONE_TAB_BYTES ? " (more than a phone's tab survives)" : ''}` +
              `${cached.has(GPT2.resolveSource(m.source, hubOptions)) ? ', cached' : ''}` +
              `${m === suggested ? ', the largest that fits this phone' : ''}`,
            m.value,
          ),
    ),
    new Option('A URL…', 'url'),
    new Option('A GGUF file on this device…', 'file'),
  );
  select.value = [...select.options].some((o) => o.value === chosen) ? chosen : 'bundled';
}

// The GGUF files are planned once the picker is first used (on a phone, once the first model has
// loaded), not on every visit to the page.
function planFilesOnce() {
  if (planFiles) return;
  planFiles = true;
  fillPicker().catch((error) => showError(error, 'load-error'));
}

// What the picker chose: a hub id or the bundled folder, the File picked on this device, or a URL.
function modelSource() {
  const entry = MODELS.find((m) => m.value === $('model-source').value);
  if (entry) return entry.source;
  if ($('model-source').value === 'file') {
    const file = $('model-file').files[0];
    if (!file) throw new Error('choose a .gguf file on this device first');
    return file;
  }
  const text = $('model-url').value.trim();
  let url;
  try {
    url = new URL(text);
  } catch {
    throw new Error(
      `"${text}" is not a URL; give the http(s) address of a Hugging Face GPT-2 folder or of a GGUF file`,
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('only http(s) model URLs are allowed');
  return url.href;
}

function fillSelect(select, count, label) {
  select.replaceChildren(...Array.from({ length: count }, (_, i) => new Option(`${label} ${i}`, String(i))));
}

async function loadModel(event) {
  event?.preventDefault();
  showError(null);
  showError(null, 'load-error');
  setBusy(true);
  const progressBar = $('load-progress');
  progressBar.value = 0;
  try {
    const source = modelSource();
    const name = typeof source === 'string' ? source : source.name;
    // Said before the first await, so that no one reads the previous model's status as this one's.
    $('model-status').textContent = `Loading ${name}…`;
    await model?.dispose();
    model = null;
    model = await GPT2.load(source, {
      ...memoryOptions(),
      ...hubOptions,
      onProgress: ({ loaded, total }) => {
        progressBar.max = total;
        progressBar.value = loaded;
        $('model-status').textContent =
          `Loading ${name}: ${(loaded / 1e6).toFixed(1)} of ${(total / 1e6).toFixed(1)} MB`;
      },
    });
    const c = model.config;
    const stats = await model.stats();
    const where = model.mode.worker ? 'in a Worker' : `on this page's thread: ${model.mode.reason}`;
    const memory =
      model.mode.backend === 'cpu' ? `of memory on the ${stats.renderer}` : `of textures on ${stats.renderer}`;
    $('model-status').textContent =
      `Loaded: ${c.n_layer} layers, ${c.n_head} heads, ${c.n_embd} wide, context ${c.n_positions}, ` +
      `${(stats.gpuBytes / 1e6).toFixed(1)} MB ${memory}, running ${where}.`;
    fillSelect($('layer'), c.n_layer, 'layer');
    fillSelect($('head'), c.n_head, 'head');
    interventions.reset(c.n_layer, c.n_head);
    sequence = [];
    lastInterventions = [];
    tokenTexts.clear();
    await fillPicker();
  } catch (error) {
    $('model-status').textContent = 'No model loaded.';
    showError(error, 'load-error');
  } finally {
    setBusy(false);
  }
}

function numberField(id, { integer = false, optional = false } = {}) {
  const text = $(id).value.trim();
  if (text === '' && optional) return undefined;
  const value = Number(text);
  if (text === '' || !Number.isFinite(value) || (integer && !Number.isInteger(value))) {
    throw new Error(`${$(id).parentElement.firstChild.textContent.trim()} must be a ${integer ? 'whole ' : ''}number`);
  }
  return value;
}

// Feeds the views what a token's positions captured: the positions are those of the window that
// ends with the token before this one (the whole prompt first; after a slide, the window kept).
async function showCaptured(captured, token) {
  const last = captured[captured.length - 1].position;
  const window = sequence.slice(sequence.length - (last + 1));
  if (captured[0].position === 0) {
    lensGrid.reset(model.config.n_layer, LENS_TOP_K);
    attentionMap.reset(model.config.n_head);
  }
  for (const c of captured) {
    const input = await tokenText(window[c.position]);
    await lensGrid.add(c.position, c.lens, input);
    attentionMap.setRow(c.position, c.attention, input);
  }
  const own = (model.config.n_layer - 1) * LENS_TOP_K; // the last layer's lens is the model's prediction
  const lens = captured[captured.length - 1].lens;
  tokenInfo.push({
    id: token.id,
    ids: lens.ids.slice(own, own + LENS_TOP_K),
    probs: lens.probs.slice(own, own + LENS_TOP_K),
  });
  if (!drawPending) {
    drawPending = true;
    requestAnimationFrame(() => {
      drawPending = false;
      attentionMap.draw(Number($('head').value));
    });
  }
}

function appendToken(output, token, index) {
  const span = document.createElement('span');
  span.textContent = token.text;
  span.dataset.index = String(index);
  output.append(span);
}

async function describeToken(span) {
  const info = tokenInfo[Number(span?.dataset.index)];
  if (!info) return;
  const rank = info.ids.indexOf(info.id);
  const chosen = JSON.stringify(await tokenText(info.id));
  const p =
    rank >= 0
      ? `p = ${info.probs[rank].toFixed(3)}`
      : `p < ${info.probs[LENS_TOP_K - 1].toFixed(3)} (not in the top ${LENS_TOP_K})`;
  const alternatives = await Promise.all(
    Array.from(info.ids, async (id, r) => `${JSON.stringify(await tokenText(id))} ${info.probs[r].toFixed(3)}`),
  );
  $('token-info').textContent = `${chosen}: ${p}. Top ${LENS_TOP_K}: ${alternatives.join(', ')}`;
}

// The `count` most likely next tokens of `logits` with their probabilities, as a line of text.
async function topTokens(logits, count = 5) {
  let max = -Infinity;
  for (const v of logits) max = Math.max(max, v);
  let sum = 0;
  for (const v of logits) sum += Math.exp(v - max);
  const best = Array.from(logits.keys())
    .sort((a, b) => logits[b] - logits[a])
    .slice(0, count);
  const parts = await Promise.all(
    best.map(async (id) => `${JSON.stringify(await tokenText(id))} ${(Math.exp(logits[id] - max) / sum).toFixed(3)}`),
  );
  return `Next token: ${parts.join(', ')}`;
}

// With interventions, the prompt's next-token top 5 with and without them, and the continuation
// without them (same options and seed), before the generation with them streams into the page.
async function compareWithout(promptIds, options, list) {
  $('next-without').textContent = await topTokens(await model.logits(promptIds));
  $('next-with').textContent = await topTokens(await model.logits(promptIds, { interventions: list }));
  let text = '';
  $('compare-without').textContent = '';
  for await (const token of model.generate(promptIds, { ...options, lensTopK: 0, attentionLayer: -1 })) {
    text += token.text;
    $('compare-without').textContent = text;
  }
}

// The format box: a regex, or a JSON schema (checked as JSON here; the engine says what it does not
// support), as generate's option of that name.
function formatOption() {
  const kind = $('format-kind').value;
  const text = $('format').value.trim();
  if (!kind) return {};
  if (!text) throw new Error('Format: give a pattern or a schema, or choose free text');
  if (kind === 'regex') return { regex: text };
  try {
    return { jsonSchema: JSON.parse(text) };
  } catch (error) {
    throw new Error(`Format: the schema is not JSON (${error.message})`);
  }
}

// Examples the format box starts with.
const FORMAT_EXAMPLES = {
  regex: ' (yes|no|maybe)\\.',
  jsonSchema: JSON.stringify({
    type: 'object',
    properties: { name: { type: 'string', maxLength: 20 }, age: { type: 'integer' } },
    required: ['name', 'age'],
  }),
};

async function generate(event) {
  event.preventDefault();
  showError(null);
  const output = $('output');
  try {
    const topK = numberField('top-k', { integer: true });
    const live = $('live-views').checked;
    const options = {
      maxNewTokens: numberField('max-new-tokens', { integer: true }),
      temperature: numberField('temperature'),
      topK: topK > 0 ? topK : undefined,
      topP: numberField('top-p'),
      repetitionPenalty: numberField('repetition-penalty'),
      seed: numberField('seed', { integer: true, optional: true }),
      lensTopK: live ? LENS_TOP_K : 0,
      attentionLayer: live ? Number($('layer').value) : -1,
      ...formatOption(),
    };
    const prompt = $('prompt').value;
    const promptIds = await model.tokenize(prompt);
    controller = new AbortController();
    setBusy(true);
    const list = await interventions.list(model);
    // Both runs of a comparison draw with one seed.
    if (list.length > 0) {
      options.seed ??= Math.floor(Math.random() * 2 ** 31);
      await compareWithout(promptIds, { ...options, signal: controller.signal }, list);
    }
    $('compare-with').textContent = '';
    if (list.length === 0) for (const id of ['compare-without', 'next-with', 'next-without']) $(id).textContent = '';
    options.interventions = list;
    lastInterventions = list;
    output.textContent = prompt;
    $('token-info').textContent = live ? 'Hover a generated token for its probability and the alternatives.' : '';
    sequence = promptIds.slice();
    tokenInfo = [];
    let count = 0;
    const start = performance.now();
    try {
      for await (const token of model.generate(promptIds, { ...options, signal: controller.signal })) {
        if (token.captured) await showCaptured(token.captured, token);
        appendToken(output, token, count);
        if (list.length > 0) $('compare-with').textContent += token.text;
        sequence.push(token.id);
        count += 1;
        const seconds = (performance.now() - start) / 1000;
        $('speed').textContent = `${count} tokens, ${(count / seconds).toFixed(2)} tokens/s`;
      }
    } catch (error) {
      if (error.name !== 'AbortError') throw error;
      $('speed').textContent += ' (stopped)';
    }
    sequence = sequence.slice(-model.config.n_positions);
    if (!live) await showAttention();
  } catch (error) {
    showError(error);
  } finally {
    controller = null;
    setBusy(false);
  }
}

// Attention of the chosen layer over the whole sequence, read back (after a generation without live
// views, or for another layer).
async function showAttention() {
  if (!model || sequence.length === 0) return;
  const layer = Number($('layer').value);
  const attention = await model.attention(layer, { interventions: lastInterventions });
  const labels = await Promise.all(sequence.slice(-attention.tokens).map(tokenText));
  attentionMap.setAll(attention, labels);
  attentionMap.draw(Number($('head').value));
  $('heatmap-tooltip').textContent =
    `Layer ${layer}, head ${$('head').value}: ${attention.tokens} tokens. Hover a cell for its tokens.`;
}

for (const id of ['weights', 'kv-cache'])
  $(id).addEventListener('change', () => fillPicker().catch((error) => showError(error, 'load-error')));
$('backend').addEventListener('change', () =>
  planMode()
    .then(fillPicker)
    .catch((error) => showError(error, 'load-error')),
);
for (const event of ['focus', 'pointerdown', 'keydown']) $('model-source').addEventListener(event, planFilesOnce);
$('model-source').addEventListener('change', () => {
  $('model-url-label').hidden = $('model-source').value !== 'url';
  $('model-file-label').hidden = $('model-source').value !== 'file';
});
$('model-form').addEventListener('submit', loadModel);
// A model file dropped anywhere on the page loads as if picked.
document.addEventListener('dragover', (event) => event.preventDefault());
document.addEventListener('drop', (event) => {
  if (event.dataTransfer?.files.length !== 1) return;
  event.preventDefault();
  $('model-file').files = event.dataTransfer.files;
  $('model-source').value = 'file';
  $('model-source').dispatchEvent(new Event('change'));
  if (!$('load').disabled) loadModel();
});
$('clear-cache').addEventListener('click', () => GPT2.clearCache().then(fillPicker).catch(showError));
$('generate-form').addEventListener('submit', generate);
$('format-kind').addEventListener('change', () => {
  const kind = $('format-kind').value;
  $('format-label').hidden = !kind;
  if (kind) $('format').value = FORMAT_EXAMPLES[kind];
});
$('stop').addEventListener('click', () => controller?.abort());
$('layer').addEventListener('change', () => {
  interventions.showLayer(Number($('layer').value));
  showAttention().catch(showError);
});
// A click on the heatmap ablates the head it shows (or brings it back).
$('heatmap').addEventListener('click', () => {
  if (model && attentionMap.tokens) interventions.toggle(Number($('layer').value), Number($('head').value));
});
$('head').addEventListener('change', () => attentionMap.tokens && attentionMap.draw(Number($('head').value)));
$('show-attention').addEventListener('click', () => showAttention().catch(showError));
$('output').addEventListener('mouseover', (event) => describeToken(event.target.closest('span')).catch(showError));
window.addEventListener('error', (event) => showError(event.error ?? event.message));
window.addEventListener('unhandledrejection', (event) => showError(event.reason));

// The CPU backend runs a thread per core only where the page is cross-origin isolated. Where the
// server sends no COOP/COEP headers (GitHub Pages), the demo's service worker (coi-sw.js) adds them and
// the page reloads once under it; one try per tab, so a browser that will not isolate it is not
// reloaded again (the model then runs on one thread).
async function isolateForCpuThreads() {
  if (runsOn.backend !== 'cpu' || crossOriginIsolated || !navigator.serviceWorker) return;
  if (sessionStorage.getItem('gpt2-demo-isolating')) return;
  sessionStorage.setItem('gpt2-demo-isolating', '1');
  await navigator.serviceWorker.register(new URL('coi-sw.js', location.href));
  await navigator.serviceWorker.ready;
  location.reload();
  await new Promise(() => {}); // nothing more happens on this page
}

planMode()
  .then(isolateForCpuThreads)
  .then(fillPicker)
  .then(() => loadModel())
  .then(() => GPT2.isPhone() && planFilesOnce());
