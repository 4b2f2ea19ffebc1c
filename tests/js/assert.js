// Small assertions for the shared suite, which also runs in browsers (no node:assert
// there). Every failure says what was checked, what was expected and what came.

export class AssertionError extends Error {
  name = 'AssertionError';
}

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);

/** JSON with sorted keys, so that values print the same whatever their key order. */
export function show(value) {
  const sorted = (v) =>
    isObject(v)
      ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, sorted(v[k])]))
      : Array.isArray(v)
        ? v.map(sorted)
        : v;
  return value === undefined ? 'undefined' : JSON.stringify(sorted(value));
}

export function ok(condition, what) {
  if (!condition) throw new AssertionError(what);
}

export function equal(actual, expected, what) {
  if (!Object.is(actual, expected)) throw new AssertionError(`${what}: expected ${show(expected)}, got ${show(actual)}`);
}

export function deepEqual(actual, expected, what) {
  if (show(actual) !== show(expected)) throw new AssertionError(`${what}:\n  expected ${show(expected)}\n  got      ${show(actual)}`);
}

export function includes(text, part, what) {
  if (typeof text !== 'string' || !text.includes(part)) throw new AssertionError(`${what}: expected text containing ${show(part)}, got ${show(text)}`);
}

export function startsWith(text, prefix, what) {
  if (typeof text !== 'string' || !text.startsWith(prefix)) throw new AssertionError(`${what}: expected text starting with ${show(prefix)}, got ${show(text)}`);
}
