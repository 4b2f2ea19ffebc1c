// The same workload through the captcha-dlq package (SQLite DLQ, engine timings scaled by SCALE).
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const { Client } = require('captcha-dlq');
const { N, SCALE, CONCURRENCY, pageUrl } = require('./workload');

const ms = (real) => Math.max(1, Math.round(real / SCALE));

(async () => {
  const dlq = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'pkg-dlq-')), 'dlq.sqlite');
  const client = new Client({
    apiKey: 'bench-key',
    baseUrl: process.argv[2],
    dlq,
    retry: { backoff: { kind: 'full_jitter', baseMs: ms(1000), capMs: ms(60000) }, transientMinDelayMs: ms(250) },
    polling: {
      firstPollMs: { recaptchaV2: ms(15000) },
      intervalMs: ms(5000),
      coalesceMs: ms(2500),
    },
    rate: { submitsPerSecond: 10 * SCALE, maxInFlight: CONCURRENCY },
  });
  await client.ready();
  const start = process.hrtime.bigint();
  const tasks = Array.from({ length: N }, (_, i) => ({ type: 'recaptcha_v2', sitekey: '6Le-SITEKEY', pageUrl: pageUrl(i) }));
  const results = await client.solveMany(tasks, { concurrency: CONCURRENCY });
  const wall = Number(process.hrtime.bigint() - start) / 1e9;
  const solved = results.filter((r) => r.ok).length;
  const failed = await client.dlq.count();
  await client.close();
  const cpu = process.cpuUsage();
  console.log(JSON.stringify({ wall, solved, failed, cpu: (cpu.user + cpu.system) / 1e6, maxRssKb: process.resourceUsage().maxRSS }));
})();
