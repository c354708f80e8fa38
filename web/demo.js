// The demo page: load a model with progress, stream tokens with tokens/s, draw attention heatmaps.
// The model runs in the module's Worker (the default), so typing stays smooth while it generates.
// All generated or model-provided text goes into the page as text (textContent), never as HTML.
import { GPT2 } from './gpt2.js';

// The model picker: the bundled model (the default; served with the page, so it works offline) and
// the official GPT-2 sizes from the Hugging Face hub, with their download sizes (model.safetensors).
const MODELS = [
  { value: 'bundled', source: 'models/default/', label: 'Bundled demo model (7.7M parameters)', bytes: 15.4e6 },
  { value: 'openai-community/gpt2', source: 'openai-community/gpt2', label: 'GPT-2 124M (hub)', bytes: 548e6 },
  { value: 'openai-community/gpt2-medium', source: 'openai-community/gpt2-medium', label: 'GPT-2 355M (hub)', bytes: 1.52e9 },
  { value: 'openai-community/gpt2-large', source: 'openai-community/gpt2-large', label: 'GPT-2 774M (hub)', bytes: 3.25e9 },
  { value: 'openai-community/gpt2-xl', source: 'openai-community/gpt2-xl', label: 'GPT-2 1.5B (hub)', bytes: 6.43e9 },
];
const HUB = 'https://huggingface.co';
const $ = (id) => document.getElementById(id);

let model = null;
let controller = null;
let sequence = [];  // ids of the last prompt + generation, for the heatmap labels
let attention = null;
let labels = [];  // the decoded text of each id of `sequence`, for the heatmap's tooltips

function showError(error) {
  const box = $('error');
  box.textContent = error ? `Error: ${error.message ?? error}` : '';
  box.hidden = !error;
  if (error) console.error(error);
}

function setBusy(busy) {
  $('generate').disabled = busy || !model;
  $('stop').disabled = !busy;
  $('load').disabled = busy;
  $('show-attention').disabled = busy || !model || sequence.length === 0;
}

// The URL the module caches a picker entry's files under.
function cacheKey(entry) {
  return entry.value === 'bundled' ? new URL(entry.source, location.href).href : `${HUB}/${entry.source}/resolve/main/`;
}

function megabytes(bytes) {
  return bytes >= 1e9 ? `${(bytes / 1e9).toFixed(2)} GB` : `${(bytes / 1e6).toFixed(1)} MB`;
}

// Fills the picker, marking the models the browser has cached; keeps the current choice.
async function fillPicker() {
  const select = $('model-source');
  const chosen = select.value || 'bundled';
  const cached = new Set((await GPT2.cachedModels()).map((m) => m.source));
  select.replaceChildren(
    ...MODELS.map((m) => new Option(`${m.label}, ${megabytes(m.bytes)}${cached.has(cacheKey(m)) ? ', cached' : ''}`, m.value)),
    new Option('A URL…', 'url'));
  select.value = chosen;
}

function modelSource() {
  const entry = MODELS.find((m) => m.value === $('model-source').value);
  if (entry) return entry.source;
  const text = $('model-url').value.trim();
  let url;
  try {
    url = new URL(text);
  } catch {
    throw new Error(`"${text}" is not a URL; give the http(s) address of a Hugging Face GPT-2 folder`);
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
  setBusy(true);
  const progressBar = $('load-progress');
  progressBar.value = 0;
  try {
    const source = modelSource();
    await model?.dispose();
    model = null;
    $('model-status').textContent = `Loading ${source}…`;
    model = await GPT2.load(source, {
      weights: $('weights').value,
      onProgress: ({ loaded, total }) => {
        progressBar.max = total;
        progressBar.value = loaded;
        $('model-status').textContent = `Loading ${source}: ${(loaded / 1e6).toFixed(1)} of ${(total / 1e6).toFixed(1)} MB`;
      },
    });
    const c = model.config;
    const stats = await model.stats();
    $('model-status').textContent =
      `Loaded: ${c.n_layer} layers, ${c.n_head} heads, ${c.n_embd} wide, context ${c.n_positions}, ` +
      `${(stats.gpuBytes / 1e6).toFixed(1)} MB of textures on ${stats.renderer}.`;
    fillSelect($('layer'), c.n_layer, 'layer');
    fillSelect($('head'), c.n_head, 'head');
    sequence = [];
    await fillPicker();
  } catch (error) {
    $('model-status').textContent = 'No model loaded.';
    showError(error);
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

async function generate(event) {
  event.preventDefault();
  showError(null);
  const output = $('output');
  try {
    const topK = numberField('top-k', { integer: true });
    const options = {
      maxNewTokens: numberField('max-new-tokens', { integer: true }),
      temperature: numberField('temperature'),
      topK: topK > 0 ? topK : undefined,
      topP: numberField('top-p'),
      repetitionPenalty: numberField('repetition-penalty'),
      seed: numberField('seed', { integer: true, optional: true }),
    };
    const prompt = $('prompt').value;
    const promptIds = await model.tokenize(prompt);
    controller = new AbortController();
    setBusy(true);
    output.textContent = prompt;
    sequence = promptIds.slice();
    let count = 0;
    const start = performance.now();
    try {
      for await (const token of model.generate(promptIds, { ...options, signal: controller.signal })) {
        output.textContent += token.text;
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
    await showAttention();
  } catch (error) {
    showError(error);
  } finally {
    controller = null;
    setBusy(false);
  }
}


function drawHeatmap() {
  const canvas = $('heatmap');
  const ctx = canvas.getContext('2d');
  const { tokens: T, data } = attention;
  const head = Number($('head').value);
  const cell = canvas.width / T;
  ctx.clearRect(0, 0, canvas.width, canvas.height);
  for (let q = 0; q < T; q += 1) {
    for (let k = 0; k <= q; k += 1) {
      const p = data[(head * T + q) * T + k];
      ctx.fillStyle = `rgb(${Math.round(255 * (1 - p))}, ${Math.round(255 * (1 - 0.6 * p))}, 255)`;
      ctx.fillRect(k * cell, q * cell, Math.ceil(cell), Math.ceil(cell));
    }
  }
  canvas.dataset.drawn = 'true';
}

async function showAttention() {
  if (!model || sequence.length === 0) return;
  const layer = Number($('layer').value);
  attention = await model.attention(layer);
  labels = await Promise.all(sequence.slice(-attention.tokens).map(async (id) => JSON.stringify(await model.decode([id]))));
  drawHeatmap();
  $('heatmap-tooltip').textContent = `Layer ${layer}, head ${$('head').value}: ${attention.tokens} tokens. Hover a cell for its tokens.`;
}

function describeCell(event) {
  if (!attention) return;
  const canvas = $('heatmap');
  const rect = canvas.getBoundingClientRect();
  const T = attention.tokens;
  const k = Math.floor(((event.clientX - rect.left) / rect.width) * T);
  const q = Math.floor(((event.clientY - rect.top) / rect.height) * T);
  if (q < 0 || k < 0 || q >= T || k >= T) return;
  const head = Number($('head').value);
  const p = k <= q ? attention.data[(head * T + q) * T + k] : 0;
  $('heatmap-tooltip').textContent = `query ${q} ${labels[q]} → key ${k} ${labels[k]}: ${p.toFixed(4)}`;
}

$('model-source').addEventListener('change', () => {
  $('model-url-label').hidden = $('model-source').value !== 'url';
});
$('model-form').addEventListener('submit', loadModel);
$('clear-cache').addEventListener('click', () => GPT2.clearCache().then(fillPicker).catch(showError));
$('generate-form').addEventListener('submit', generate);
$('stop').addEventListener('click', () => controller?.abort());
$('layer').addEventListener('change', () => showAttention().catch(showError));
$('head').addEventListener('change', () => attention && drawHeatmap());
$('show-attention').addEventListener('click', () => showAttention().catch(showError));
$('heatmap').addEventListener('mousemove', describeCell);
window.addEventListener('error', (event) => showError(event.error ?? event.message));
window.addEventListener('unhandledrejection', (event) => showError(event.reason));

fillPicker().then(() => loadModel());
