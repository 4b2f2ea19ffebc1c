'use strict';
// The shared wire vectors (tests/vectors/*.json) through the addon's core, and every
// task case again as a plain camelCase object, as a JS user writes it.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { evaluateVector, parseTask, InvalidTask } = require('captcha-dlq');
const { repo } = require('./helpers');

const dir = path.join(repo, 'tests', 'vectors');
const files = fs.readdirSync(dir).filter((f) => f.endsWith('.json'));

function camel(key) {
  return key.replace(/_([a-z0-9])/g, (_, c) => c.toUpperCase());
}

test('the vector files exist', () => {
  assert.ok(files.length >= 3, `found ${files.join(', ')}`);
});

for (const file of files) {
  test(`vectors: ${file}`, () => {
    const { cases } = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8'));
    assert.ok(cases.length > 0);
    for (const [i, c] of cases.entries()) {
      const { expected, name, ...input } = c;
      const actual = evaluateVector(JSON.stringify(input));
      assert.deepEqual(actual, expected, `${file} case ${i} ${name ?? ''}`);
    }
  });
}

test('every task case, written as a camelCase object, gives the same result', () => {
  const { cases } = JSON.parse(fs.readFileSync(path.join(dir, 'tasks.json'), 'utf8'));
  let checked = 0;
  for (const c of cases) {
    if (!c.task || typeof c.task !== 'object' || Array.isArray(c.task)) continue;
    const task = Object.fromEntries(Object.entries(c.task).map(([k, v]) => [k === 'type' ? k : camel(k), v]));
    const { expected, name, ...input } = c;
    const actual = evaluateVector({ ...input, task });
    if (expected.error) {
      // Errors name the field as the user spelt it: `minScore` for a camelCase task.
      assert.deepEqual(Object.keys(actual), ['error'], `camelCase ${name}`);
      assert.ok([expected.error.field, camel(expected.error.field)].includes(actual.error.field), `camelCase ${name}: ${actual.error.field}`);
    } else {
      assert.deepEqual(actual, expected, `camelCase ${name}`);
    }
    let parsed;
    try {
      parsed = parseTask(task);
    } catch (e) {
      assert.ok(e instanceof InvalidTask && e.code === 'INVALID_TASK', `${name}: ${e}`);
      assert.ok(expected.error, `${name}: only an error case may fail to parse`);
      assert.equal(e.field, actual.error.field, name);
    }
    // A task that parses may still be refused by a provider (expected.error without a parse error).
    if (parsed) assert.equal(parsed.type, c.task.type, name);
    checked++;
  }
  assert.ok(checked > 10, `only ${checked} task cases`);
});
