// The demo's views inside the model, fed one position at a time (live during generation, from the
// tokens' `captured` data, or from a readback afterwards): the logit-lens grid (layers by positions,
// each cell the lens's most likely next token, its probability as colour) and the attention heatmap
// with token labels on both axes. Long contexts scroll: cells never shrink below a readable size.
// Token text only ever goes into the page as text (textContent, fillText).

// Whitespace made visible, so a cell or label of " " or "\n" is not blank.
export function visible(text) {
  return text.replace(/ /g, '␣').replace(/\n/g, '⏎').replace(/\t/g, '⇥') || '∅';
}

function shade(p) {
  return `rgba(51, 102, 255, ${(0.08 + 0.92 * p).toFixed(3)})`;
}

export class LensGrid {
  // `decode(id)` resolves to a token's text; `describe(text)` shows a cell's details.
  constructor(table, decode, describe) {
    this._table = table;
    this._decode = decode;
    this._describe = describe;
    this._cells = []; // per column: { ids, probs } of every layer (layer * topK + rank)
    this._first = 0; // the position of the first column
    table.addEventListener('mouseover', (event) => this._hover(event.target.closest('td')));
    table.addEventListener('focusin', (event) => this._hover(event.target.closest('td')));
  }

  // An empty grid of `layers` rows; the last layer (the model's own prediction) on top.
  reset(layers, topK) {
    this._layers = layers;
    this._topK = topK;
    this._cells = [];
    const head = document.createElement('tr');
    head.append(document.createElement('th'));
    const rows = Array.from({ length: layers }, (_, i) => {
      const row = document.createElement('tr');
      const label = document.createElement('th');
      label.scope = 'row';
      const layer = layers - 1 - i;
      label.textContent = layer === layers - 1 ? `${layer} (output)` : `${layer}`;
      row.append(label);
      return row;
    });
    this._table.replaceChildren(head, ...rows);
    this._table.hidden = false;
  }

  // Drops the columns from `column` on.
  _truncate(column) {
    this._cells.length = Math.min(this._cells.length, column);
    for (const row of this._table.rows) while (row.cells.length > column + 1) row.lastChild.remove();
  }

  // Appends the column of `position`, whose input token is `inputText`, replacing any from that
  // position on. Positions without a lens (a long prompt's first ones, GenerateOptions.lensPositions)
  // get no column: the grid starts at the first that has one.
  async add(position, lens, inputText) {
    if (!lens) return;
    // Follow the newest column only when the reader is at the right edge; never scroll the page.
    const wrap = this._table.parentElement;
    const follow = wrap.scrollLeft + wrap.clientWidth >= wrap.scrollWidth - 2;
    if (this._cells.length === 0 || position < this._first) this._first = position;
    const column = position - this._first;
    this._truncate(column);
    this._cells[column] = lens;
    const header = document.createElement('th');
    header.scope = 'col';
    header.textContent = visible(inputText);
    this._table.rows[0].append(header);
    const texts = await Promise.all(
      Array.from({ length: this._layers }, (_, l) => this._decode(lens.ids[l * this._topK])),
    );
    for (let i = 0; i < this._layers; i += 1) {
      const layer = this._layers - 1 - i;
      const td = document.createElement('td');
      td.textContent = visible(texts[layer]);
      td.style.background = shade(lens.probs[layer * this._topK]);
      td.dataset.layer = String(layer);
      td.dataset.position = String(position);
      td.tabIndex = -1;
      this._table.rows[i + 1].append(td);
    }
    if (follow) wrap.scrollLeft = wrap.scrollWidth;
  }

  async _hover(td) {
    if (!td?.dataset.layer) return;
    const layer = Number(td.dataset.layer),
      position = Number(td.dataset.position);
    const lens = this._cells[position - this._first];
    const ranks = await Promise.all(
      Array.from({ length: this._topK }, async (_, r) => {
        const at = layer * this._topK + r;
        return `${JSON.stringify(await this._decode(lens.ids[at]))} ${lens.probs[at].toFixed(3)}`;
      }),
    );
    this._describe(`Layer ${layer}, position ${position}: ${ranks.join(', ')}`);
  }
}

export class AttentionMap {
  static MIN_CELL = 4; // px: below this the map scrolls instead of shrinking
  static LABEL_CELL = 10; // px: cells at least this large get token labels on both axes

  constructor(canvas, describe) {
    this._canvas = canvas;
    this._describe = describe;
    this._rows = []; // per query position: heads x (position + 1) probabilities
    this._labels = []; // per position: the token's text
    canvas.addEventListener('mousemove', (event) => this._hover(event));
  }

  reset(heads) {
    this._heads = heads;
    this._rows = [];
    this._labels = [];
  }

  get tokens() {
    return this._rows.length;
  }

  // Sets the row of query `position` (and drops later ones: a sliding window starts again at 0).
  setRow(position, probs, label) {
    this._rows.length = Math.min(this._rows.length, position);
    this._labels.length = this._rows.length;
    this._rows[position] = probs;
    this._labels[position] = label;
  }

  // The whole matrix of a readback: data[(head * T + query) * T + key].
  setAll({ heads, tokens: T, data }, labels) {
    this.reset(heads);
    for (let q = 0; q < T; q += 1) {
      const row = new Float32Array(heads * (q + 1));
      for (let h = 0; h < heads; h += 1) row.set(data.subarray((h * T + q) * T, (h * T + q) * T + q + 1), h * (q + 1));
      this.setRow(q, row, labels[q]);
    }
  }

  draw(head) {
    this._head = head;
    const T = this._rows.length;
    const canvas = this._canvas;
    const fit = 480 / Math.max(T, 1);
    const cell = Math.max(fit, AttentionMap.MIN_CELL);
    const margin = cell >= AttentionMap.LABEL_CELL ? 72 : 0;
    this._cell = cell;
    this._margin = margin;
    canvas.width = Math.ceil(margin + T * cell);
    canvas.height = canvas.width;
    canvas.style.width = `${canvas.width}px`;
    const ctx = canvas.getContext('2d');
    ctx.clearRect(0, 0, canvas.width, canvas.height);
    for (let q = 0; q < T; q += 1) {
      const row = this._rows[q];
      for (let k = 0; k <= q; k += 1) {
        const p = row[head * (q + 1) + k];
        ctx.fillStyle = `rgb(${Math.round(255 * (1 - p))}, ${Math.round(255 * (1 - 0.6 * p))}, 255)`;
        ctx.fillRect(margin + k * cell, margin + q * cell, Math.ceil(cell), Math.ceil(cell));
      }
    }
    if (margin > 0) this._drawLabels(ctx, cell, margin);
    canvas.dataset.drawn = 'true';
    canvas.dataset.tokens = String(T);
  }

  _drawLabels(ctx, cell, margin) {
    ctx.fillStyle = getComputedStyle(this._canvas).color;
    ctx.font = `${Math.min(12, cell - 1)}px system-ui, sans-serif`;
    ctx.textBaseline = 'middle';
    const short = (text) => (text.length > 9 ? `${text.slice(0, 8)}…` : text);
    this._labels.forEach((label, i) => {
      const text = short(visible(label));
      ctx.textAlign = 'right';
      ctx.fillText(text, margin - 4, margin + (i + 0.5) * cell); // queries, down the left
      ctx.save();
      ctx.translate(margin + (i + 0.5) * cell, margin - 4);
      ctx.rotate(-Math.PI / 2);
      ctx.textAlign = 'left';
      ctx.fillText(text, 0, 0); // keys, along the top
      ctx.restore();
    });
  }

  _hover(event) {
    if (this._cell === undefined) return;
    const rect = this._canvas.getBoundingClientRect();
    const scale = this._canvas.width / rect.width;
    const k = Math.floor(((event.clientX - rect.left) * scale - this._margin) / this._cell);
    const q = Math.floor(((event.clientY - rect.top) * scale - this._margin) / this._cell);
    const T = this._rows.length;
    if (q < 0 || k < 0 || q >= T || k >= T) return;
    const p = k <= q ? this._rows[q][this._head * (q + 1) + k] : 0;
    this._describe(
      `query ${q} ${JSON.stringify(this._labels[q])} → key ${k} ${JSON.stringify(this._labels[k])}: ${p.toFixed(4)}`,
    );
  }
}
