// One Node client on the end-to-end workload (issue 18, item 5); started by bench/e2e/all.py.
//
//   node bench/node/e2e.js {captcha-dlq|seeds} PLAN MOCK_URL [--dlq PATH] [--concurrency 100]
//
// Solves the workload that `e2e --plan` printed (PLAN, a JSON file) against the mock at MOCK_URL:
//   captcha-dlq  the package: solveMany over every task with the plan's client options (same
//                provider, polling, rate and default retry policy as the Rust client), DLQ at --dlq;
//   seeds        the seeds' solveCaptcha (seeds.js: its own sleeps, scaled 1/10, and its own
//                4 attempts) in --concurrency workers.
// Prints one JSON line: solved, failed, wall_s and last_solved_s, both from the first task handed
// to the client; the driver reads CPU, peak RSS and the mock's counters itself.
// Needs `npm install` in bench/node. Not run in CI.
'use strict';
const fs = require('fs');
const { parseArgs } = require('util');
const { seedClient } = require('./seeds');

// The plan's options are snake_case (as the core and Python read them); Node takes camelCase.
const camel = (value) =>
  value && typeof value === 'object' && !Array.isArray(value)
    ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k.replace(/_([a-z])/g, (_, c) => c.toUpperCase()), camel(v)]))
    : value;

async function packageClient(plan, url, dlq) {
  const { Client } = require('captcha-dlq');
  const client = new Client({ apiKey: 'bench-key', provider: plan.provider, baseUrl: url, dlq, ...camel(plan.client_options) });
  await client.ready();
  const tasks = plan.page_urls.map((pageUrl) => ({ type: 'recaptcha_v2', sitekey: plan.sitekey, pageUrl }));
  let solved = 0;
  let last = null;
  const start = performance.now();
  // Every task in flight at once; the engine's rate limit and maxInFlight pace them.
  await client.solveMany(tasks, {
    concurrency: tasks.length,
    onResult: (r) => {
      if (r.ok) {
        solved += 1;
        last = (performance.now() - start) / 1000;
      }
    },
  });
  const wall = (performance.now() - start) / 1000;
  await client.close();
  return { solved, failed: tasks.length - solved, wall_s: wall, last_solved_s: last };
}

async function seeds(plan, url, _dlq, concurrency) {
  const { solveCaptcha } = seedClient(url, 10);
  let next = 0;
  let solved = 0;
  let last = null;
  const start = performance.now();
  async function worker() {
    while (next < plan.page_urls.length) {
      const i = next++;
      if (await solveCaptcha(plan.sitekey, plan.page_urls[i])) {
        solved += 1;
        last = (performance.now() - start) / 1000;
      }
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker));
  const wall = (performance.now() - start) / 1000;
  return { solved, failed: plan.page_urls.length - solved, wall_s: wall, last_solved_s: last };
}

const CLIENTS = { 'captcha-dlq': packageClient, seeds };

(async () => {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { dlq: { type: 'string', default: 'memory' }, concurrency: { type: 'string', default: '100' } },
  });
  const [name, planFile, url] = positionals;
  if (!CLIENTS[name] || !planFile || !url) {
    console.error('usage: node bench/node/e2e.js {captcha-dlq|seeds} PLAN MOCK_URL [--dlq PATH] [--concurrency 100]');
    process.exit(2);
  }
  const plan = JSON.parse(fs.readFileSync(planFile, 'utf8'));
  console.log(JSON.stringify(await CLIENTS[name](plan, url, values.dlq, Number(values.concurrency))));
})();
