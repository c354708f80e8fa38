// Checks options against src/options.json (generated as gpt2-options.js) and fills its defaults, so
// that every option crosses into the engine typed and complete. Ranges beyond the schema's (topP in
// (0, 1], ...) are the engine's to check: its messages name the option too.
import { checkedInterventions, isPlainObject } from './gpt2-interventions.js';
import schema from './gpt2-options.js';

function describe(spec) {
  switch (spec.type) {
    case 'enum':
      return spec.values.map((v) => `'${v}'`).join(' or ');
    case 'integer':
      return spec.min === undefined ? 'an integer' : `an integer >= ${spec.min}`;
    case 'number':
      return spec.min === undefined ? 'a number' : `a number >= ${spec.min}`;
    case 'boolean':
      return 'true or false';
    case 'string':
      return 'a string';
    case 'strings':
      return 'a string or an array of strings';
    case 'interventions':
      return 'an array of interventions';
    case 'jsonSchema':
      return 'a JSON schema (an object, or its JSON text)';
    case 'logitBias':
      return 'an object of token ids to numbers (-Infinity bans a token)';
    default:
      throw new Error(`options.json: unknown type ${spec.type}`);
  }
}

// A value as a message quotes it: JSON where it has one (not a BigInt, a cycle or a function).
function shown(value) {
  if (typeof value === 'bigint') return `${value}n`;
  try {
    return JSON.stringify(value) ?? `a ${typeof value}`;
  } catch {
    return `a${/^[aeiou]/.test(typeof value) ? 'n' : ''} ${typeof value} that JSON cannot hold`;
  }
}

function parsed(text) {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function valid(spec, value) {
  switch (spec.type) {
    case 'enum':
      return spec.values.includes(value);
    case 'integer':
      return Number.isInteger(value) && (spec.min === undefined || value >= spec.min);
    case 'number':
      return typeof value === 'number' && Number.isFinite(value) && (spec.min === undefined || value >= spec.min);
    case 'boolean':
      return typeof value === 'boolean';
    case 'string':
      return typeof value === 'string' && value !== '';
    case 'strings':
      return typeof value === 'string' || (Array.isArray(value) && value.every((s) => typeof s === 'string'));
    case 'jsonSchema':
      return isPlainObject(value) || (typeof value === 'string' && isPlainObject(parsed(value)));
    case 'logitBias':
      return (
        isPlainObject(value) &&
        Object.entries(value).every(
          ([id, bias]) =>
            /^(0|[1-9]\d{0,8})$/.test(id) && typeof bias === 'number' && (Number.isFinite(bias) || bias === -Infinity),
        )
      );
    default:
      return false;
  }
}

// The options of `group` ('load', 'tuning', 'generate', or a method's: 'lens', ...) in `given`,
// checked, with defaults filled in (null where the schema leaves an option unset). `prefix` names them
// in messages ('tuning.', 'lens: ').
// Keys listed in `passThrough` (callbacks, signals, canvases) are returned as given.
export function resolveOptions(group, given = {}, { prefix = '', passThrough = [] } = {}) {
  const specs = schema[group];
  const out = {};
  for (const [name, value] of Object.entries(given ?? {})) {
    if (passThrough.includes(name)) {
      out[name] = value;
      continue;
    }
    const spec = specs[name];
    if (!spec) {
      const known = [...Object.keys(specs), ...passThrough];
      throw new Error(
        `${group}: unknown option ${name}; ${known.length ? `known: ${known.join(', ')}` : 'it takes no options'}`,
      );
    }
    if (value === undefined || value === null) continue;
    if (spec.type === 'interventions') {
      out[name] = checkedInterventions(value, `${prefix}${name}`);
      continue;
    }
    if (!valid(spec, value)) throw new Error(`${prefix}${name} must be ${describe(spec)}, got ${shown(value)}`);
    out[name] = spec.type === 'strings' && typeof value === 'string' ? [value] : value;
  }
  for (const [name, spec] of Object.entries(specs)) if (!(name in out)) out[name] = structuredClone(spec.default);
  return out;
}
