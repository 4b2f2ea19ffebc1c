// Runs both clients against a fresh mock each and prints a table:
// wall time, HTTP requests per solved task (mock counters), CPU seconds, peak RSS.
'use strict';
const { spawn, execFileSync } = require('child_process');
const path = require('path');
const readline = require('readline');
const { MOCK, N, SCALE } = require('./workload');

const repo = path.resolve(__dirname, '..', '..');
const mockBin = process.env.CAPTCHA_DLQ_MOCK || path.join(repo, 'target', 'debug', 'captcha-dlq-mock');

async function withMock(fn) {
  const child = spawn(mockBin, ['--port', '0', '--config', JSON.stringify(MOCK)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise((resolve, reject) => {
    readline.createInterface({ input: child.stdout }).once('line', (l) => resolve(l.trim().split(' ')[1]));
    child.once('exit', (c) => reject(new Error(`mock exited ${c}`)));
  });
  try {
    return await fn(url);
  } finally {
    child.kill('SIGTERM');
  }
}

function runClient(script, url) {
  const out = execFileSync(process.execPath, [path.join(__dirname, script), url], { encoding: 'utf8', maxBuffer: 1 << 24 });
  return JSON.parse(out.trim().split('\n').pop());
}

(async () => {
  const rows = [];
  for (const [name, script] of [['seeds (axios + JSON file DLQ)', 'seeds.js'], ['captcha-dlq (SQLite DLQ)', 'package-client.js']]) {
    const row = await withMock(async (url) => {
      const r = runClient(script, url);
      const counters = await (await fetch(`${url}/mock/counters`)).json();
      const requests = Object.values(counters.requests).reduce((a, b) => a + b, 0);
      return { name, ...r, requests, submits: counters.submits };
    });
    rows.push(row);
  }
  console.log(`\n${N} tasks, time scaled 1/${SCALE}, mock answers after ${MOCK.default.solve_after_ms} ms\n`);
  console.log('| client | wall s | solved | dead-lettered | HTTP requests | requests / solved | submits | CPU s | peak RSS MB |');
  console.log('|---|---|---|---|---|---|---|---|---|');
  for (const r of rows) {
    console.log(`| ${r.name} | ${r.wall.toFixed(1)} | ${r.solved} | ${r.failed} | ${r.requests} | ${(r.requests / r.solved).toFixed(2)} | ${r.submits} | ${r.cpu.toFixed(2)} | ${(r.maxRssKb / 1024).toFixed(0)} |`);
  }
})();
