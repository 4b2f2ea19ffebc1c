// Tiny assertions for the in-browser suite (node:assert is not available there). Every failure says what was
// checked, what was expected and what came.

export class AssertionError extends Error {
  name = 'AssertionError';
}

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);

/** JSON with sorted keys: values print the same whatever their key order. */
export function show(value) {
  const sorted = (v) =>
    isObject(v) ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, sorted(v[k])])) : Array.isArray(v) ? v.map(sorted) : v;
  return value === undefined ? 'undefined' : JSON.stringify(sorted(value));
}

export function ok(condition, what) {
  if (!condition) throw new AssertionError(what);
}

export function equal(actual, expected, what) {
  if (!Object.is(actual, expected)) throw new AssertionError(`${what}: expected ${show(expected)}, got ${show(actual)}`);
}

/** What differs; for two objects, only the keys that do. */
function difference(actual, expected) {
  if (!isObject(actual) || !isObject(expected)) return `expected ${show(expected)}, got ${show(actual)}`;
  const keys = [...new Set([...Object.keys(expected), ...Object.keys(actual)])];
  return keys
    .filter((k) => show(actual[k]) !== show(expected[k]))
    .map((k) => `.${k} expected ${show(expected[k])}, got ${show(actual[k])}`)
    .join('; ');
}

/** For JSON-shaped values (compared through `show`). */
export function deepEqual(actual, expected, what) {
  if (show(actual) !== show(expected)) throw new AssertionError(`${what}: ${difference(actual, expected)}`);
}

export function startsWith(text, prefix, what) {
  if (typeof text !== 'string' || !text.startsWith(prefix)) {
    throw new AssertionError(`${what}: expected a string starting with ${show(prefix)}, got ${show(text)}`);
  }
}
