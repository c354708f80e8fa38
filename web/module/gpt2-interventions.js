// Checks an `interventions` option (src/options.json's type "interventions") on the caller's thread and
// copies it, so that what reaches the engine is plain, typed and the caller's later changes do not
// touch it. What only the model can say (a layer past n_layer, a vector not n_embd long) the engine
// checks, naming the item as these messages do (model/interventions.cpp).

const KINDS = {
  ablateHead: { layer: 'index', head: 'index' },
  ablateNeurons: { layer: 'index', neurons: 'indices' },
  steer: { layer: 'index', vector: 'vector', scale: 'scale?' },
  patch: { layer: 'index', position: 'index', vector: 'vector' },
};

const WANTED = {
  index: 'an integer >= 0',
  indices: 'an array of integers >= 0',
  vector: 'a Float32Array or an array of finite numbers, not empty',
  'scale?': 'a finite number',
};

const isIndex = (v) => Number.isInteger(v) && v >= 0;
// An object literal (or one without a prototype), as options are given.
export const isPlainObject = (v) =>
  typeof v === 'object' && v !== null && [Object.prototype, null].includes(Object.getPrototypeOf(v));
// Arrays and typed arrays of numbers (not BigInt64Array's bigints).
const isVector = (v) =>
  (Array.isArray(v) || (ArrayBuffer.isView(v) && !(v instanceof DataView))) &&
  v.length > 0 &&
  Array.prototype.every.call(v, (x) => typeof x === 'number' && Number.isFinite(x));

const FIELD_CHECKS = {
  index: isIndex,
  indices: (v) => Array.isArray(v) && v.every(isIndex),
  vector: isVector,
  'scale?': (v) => v === undefined || (typeof v === 'number' && Number.isFinite(v)),
};
// Copies of the same kind (an array stays an array, a typed array its type), so that the options
// given and those checked compare equal.
const COPIES = {
  index: (v) => v,
  indices: (v) => [...v],
  vector: (v) => v.slice(),
  'scale?': (v) => v,
};

// A value as a message names it, briefly: a vector's values are not worth quoting.
function brief(v) {
  if (v === undefined) return 'nothing';
  if (Array.isArray(v)) return `an array of ${v.length}`;
  if (ArrayBuffer.isView(v)) return v.length === undefined ? 'a DataView' : `a ${v.constructor.name} of ${v.length}`;
  if (typeof v === 'number' || typeof v === 'boolean' || v === null) return String(v);
  return typeof v === 'string' ? JSON.stringify(v.slice(0, 40)) : `a ${typeof v}`;
}

function shape(kind) {
  const fields = Object.entries(KINDS[kind]).map(([f, t]) => (t.endsWith('?') ? `${f}?` : f));
  return `{ ${kind}: { ${fields.join(', ')} } }`;
}
const SHAPES = Object.keys(KINDS).map(shape).join(', ');

// `list` checked and copied, or an Error whose
// message starts with `name` and says which item and field is wrong and what it must be.
export function checkedInterventions(list, name) {
  if (!Array.isArray(list)) throw new Error(`${name} must be an array of interventions (${SHAPES})`);
  return list.map((item, i) => {
    const at = `${name}[${i}]`;
    const keys = isPlainObject(item) ? Object.keys(item) : [];
    if (keys.length !== 1 || !(keys[0] in KINDS))
      throw new Error(`${at} must be an object with one key, one of ${SHAPES}`);
    const kind = keys[0];
    const body = item[kind];
    const fields = KINDS[kind];
    if (!isPlainObject(body)) throw new Error(`${at}.${kind} must be an object: ${shape(kind)}`);
    const unknown = Object.keys(body).find((key) => !(key in fields));
    if (unknown !== undefined) throw new Error(`${at}.${kind} must be ${shape(kind)}, got the key ${unknown}`);
    const copy = {};
    for (const [field, type] of Object.entries(fields)) {
      if (!FIELD_CHECKS[type](body[field]))
        throw new Error(`${at}.${kind}.${field} must be ${WANTED[type]}, got ${brief(body[field])}`);
      if (body[field] !== undefined) copy[field] = COPIES[type](body[field]);
    }
    return { [kind]: copy };
  });
}
