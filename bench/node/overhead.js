// The cost of one `solve` round trip from Node when the service answers at once (issue 18, item 6).
//
//   node bench/node/overhead.js [--tasks 2000] [--concurrency 1,100,1000]
//
// The same workload as bench/python/overhead.py and the Rust `overhead` bin: TASKS reCAPTCHA v2
// tasks per concurrency level (1, 100, 1000 in flight), memory store, the mock solving every task on
// submission (its own process, a fresh one per level), first poll after 1 ms and then every 1 ms, no
// submit rate limit. Each level runs `client.solve` calls in that many workers. CPU is this process
// (binding, client runtime and V8); the difference with the Rust row is what the binding costs.
// Needs the mock binary (CAPTCHA_DLQ_MOCK, default target/release/captcha-dlq-mock) and
// `npm install` in bench/node. Not run in CI; no timing is asserted.
'use strict';
const path = require('path');
const readline = require('readline');
const { spawn } = require('child_process');
const { parseArgs } = require('util');
const { Client } = require('captcha-dlq');

const repo = path.resolve(__dirname, '..', '..');
const mockBin = process.env.CAPTCHA_DLQ_MOCK || path.join(repo, 'target', 'release', 'captcha-dlq-mock');

async function startMock(tasks) {
  const config = { default: { solve_after_ms: 0 }, max_tasks: Math.max(tasks, 1) };
  const child = spawn(mockBin, ['--port', '0', '--config', JSON.stringify(config)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise((resolve, reject) => {
    readline.createInterface({ input: child.stdout }).once('line', (l) => resolve(l.trim().split(' ')[1]));
    child.once('exit', (c) => reject(new Error(`the mock exited with ${c}`)));
  });
  return { child, url };
}

async function runLevel(url, tasks, concurrency) {
  const client = new Client({
    apiKey: 'bench-key',
    dlq: 'memory',
    baseUrl: url,
    allowInsecureHttp: true,
    polling: { firstPollMs: 1, intervalMs: 1, minIntervalMs: 1, coalesceMs: 0 },
    rate: { submitsPerSecond: 1e6, maxInFlight: concurrency },
  });
  await client.ready();
  const errors = [];
  let next = 0;
  let solved = 0;
  async function worker() {
    while (next < tasks) {
      const i = next++;
      try {
        await client.solve({ type: 'recaptcha_v2', sitekey: '6Le-SITEKEY', pageUrl: `https://example.com/page/${i}` });
        solved += 1;
      } catch (e) {
        errors.push(e); // counted; the first is shown
      }
    }
  }
  const cpu = process.cpuUsage();
  const start = performance.now();
  await Promise.all(Array.from({ length: concurrency }, worker));
  const wall = (performance.now() - start) / 1000;
  const used = process.cpuUsage(cpu);
  await client.close();
  if (errors.length) console.error(`concurrency ${concurrency}: ${errors.length} tasks failed, e.g.: ${errors[0]}`);
  return { concurrency, solved, wall, cpu: (used.user + used.system) / 1e6 };
}

(async () => {
  const { values } = parseArgs({ options: { tasks: { type: 'string', default: '2000' }, concurrency: { type: 'string', default: '1,100,1000' } } });
  const tasks = Number(values.tasks);
  const levels = values.concurrency.split(',').map(Number);
  if (!(tasks >= 1) || levels.some((c) => !(c >= 1))) {
    console.error('overhead.js: --tasks and every --concurrency level must be at least 1');
    process.exit(2);
  }
  const rows = [];
  for (const c of levels) {
    const { child, url } = await startMock(tasks);
    try {
      console.error(`concurrency ${c}: solving ${tasks} tasks…`);
      rows.push(await runLevel(url, tasks, c));
    } finally {
      child.kill('SIGTERM');
    }
  }
  console.log(`overhead: ${tasks} recaptcha_v2 tasks per row, Node client (solve), memory store`);
  console.log('| client | concurrency | solved | wall s | µs per task (wall) | CPU µs per task (this process) |');
  console.log('|---|---|---|---|---|---|');
  for (const r of rows) {
    const n = Math.max(r.solved, 1);
    console.log(`| Node | ${r.concurrency} | ${r.solved} | ${r.wall.toFixed(2)} | ${((r.wall * 1e6) / n).toFixed(0)} | ${((r.cpu * 1e6) / n).toFixed(0)} |`);
  }
})();
