// The demo's interventions (the module's `interventions` option, docs/api.md): heads ablated by
// clicking them (the attention panel's head buttons, or its heatmap, which shows one head), and a
// steering vector made ActAdd's way, the difference of two short prompts' residual streams after a
// layer (their last positions), times a scale.
export class DemoInterventions {
  // `elements`: { heads (the head buttons' container), ablated (the summary), clear (its button),
  // plus, minus (the steering prompts), layer (the steering layer's select), scale (a range input),
  // scaleShown (an <output>) }.
  constructor(elements) {
    this._e = elements;
    this._ablated = new Set(); // "layer.head"
    this._steering = null; // { key, vector } of the last steering prompts and layer
    elements.clear.addEventListener('click', () => {
      this._ablated.clear();
      this._changed();
    });
    elements.scale.addEventListener('input', () => this._changed());
    for (const input of [elements.plus, elements.minus, elements.layer])
      input.addEventListener('change', () => this._changed());
    this._shownLayer = 0;
    this._heads = 0;
  }

  // A new model: no interventions, `layers` to steer after, `heads` buttons per layer.
  reset(layers, heads) {
    this._ablated.clear();
    this._steering = null;
    this._heads = heads;
    this._e.layer.replaceChildren(
      ...Array.from({ length: layers }, (_, i) => new Option(`after layer ${i}`, String(i))),
    );
    this._e.layer.value = String(layers >> 1);
    this._e.scale.value = '0';
    this.showLayer(0);
  }

  // The head buttons of `layer` (the attention panel's), pressed where ablated.
  showLayer(layer) {
    this._shownLayer = layer;
    this._e.heads.replaceChildren(
      ...Array.from({ length: this._heads }, (_, head) => {
        const button = document.createElement('button');
        button.type = 'button';
        button.textContent = String(head);
        button.setAttribute('aria-pressed', String(this._ablated.has(`${layer}.${head}`)));
        button.setAttribute('aria-label', `Ablate head ${head} of layer ${layer}`);
        button.addEventListener('click', () => this.toggle(layer, head));
        return button;
      }),
    );
    this._summarize();
  }

  toggle(layer, head) {
    const key = `${layer}.${head}`;
    if (!this._ablated.delete(key)) this._ablated.add(key);
    this._changed();
  }

  get active() {
    return this._ablated.size > 0 || this._scale() !== 0;
  }

  // The option's list; the steering vector is read from the model when its prompts or layer changed.
  async list(model) {
    const list = [...this._ablated].map((key) => {
      const [layer, head] = key.split('.').map(Number);
      return { ablateHead: { layer, head } };
    });
    const scale = this._scale();
    if (scale === 0) return list;
    const plus = this._e.plus.value;
    const minus = this._e.minus.value;
    const layer = Number(this._e.layer.value);
    if (!plus || !minus) throw new Error('Steering needs both prompts');
    const key = JSON.stringify([plus, minus, layer]);
    if (this._steering?.key !== key) {
      const last = async (text) => {
        const states = await model.hiddenStates(text, { layer });
        return states.subarray(states.length - model.config.n_embd);
      };
      const [a, b] = [await last(plus), await last(minus)];
      this._steering = { key, vector: a.map((v, i) => v - b[i]) };
    }
    return [...list, { steer: { layer, vector: this._steering.vector, scale } }];
  }

  _scale() {
    return Number(this._e.scale.value);
  }

  _changed() {
    this.showLayer(this._shownLayer);
  }

  _summarize() {
    const heads = [...this._ablated].sort();
    const scale = this._scale();
    this._e.scaleShown.value = scale.toFixed(1);
    const parts = [];
    if (heads.length) parts.push(`heads ablated: ${heads.join(', ')}`);
    if (scale !== 0) parts.push(`steering ×${scale.toFixed(1)} ${this._e.layer.selectedOptions[0]?.text ?? ''}`);
    this._e.ablated.textContent = parts.length ? `Active: ${parts.join('; ')}.` : 'No interventions.';
    this._e.clear.disabled = heads.length === 0;
  }
}
