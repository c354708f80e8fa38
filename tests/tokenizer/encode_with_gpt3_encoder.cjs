// Encodes a UTF-8 text file with gpt-3-encoder's own JS encode() and writes the ids as a JSON array:
// the independent reference for brown_corpus_test.cpp. Usage: node encode_with_gpt3_encoder.cjs IN OUT
//
// encode() concatenates its result array once per piece, which is quadratic over megabytes, so the
// text is encoded line by line. That gives the same ids as one call only if every "\n" lies between
// two non-space characters: there GPT-2's pattern always ends a piece after the "\n", whatever follows.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { encode } = require(path.join(__dirname, '..', '..', 'node_modules', 'gpt-3-encoder'));

const [input, output] = process.argv.slice(2);
if (!input || !output) {
  console.error('usage: node encode_with_gpt3_encoder.cjs INPUT_TEXT OUTPUT_JSON');
  process.exit(2);
}
const text = fs.readFileSync(input, 'utf8');
const unsafe = text.search(/\s\n|\n\s|^\n|\n$/);
if (unsafe >= 0) {
  console.error(
    `${input}: the newline near character ${unsafe} touches whitespace or an end; ` +
      'line-by-line encoding would differ from encoding the whole text',
  );
  process.exit(1);
}
const ids = [];
for (const line of text.split(/(?<=\n)/)) {
  for (const id of encode(line)) ids.push(id);
}
fs.writeFileSync(output, JSON.stringify(ids));
