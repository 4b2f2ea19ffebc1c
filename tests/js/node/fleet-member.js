// One member of a fleet for the Node fleet test: a client over the shared DirectoryStore in `dir`, with the
// fleet's budget. It solves its tasks, prints their outcomes as one JSON line, and stays up (as a worker of a
// fleet does) until a line arrives on stdin, then closes.
// Usage: node fleet-member.js PACKAGE_DIR OPTIONS_JSON DIR NAME N
import path from 'node:path';
import readline from 'node:readline';
import { DirectoryStore } from './directory-store.js';

const [packageDir, optionsJson, dir, name, n] = process.argv.slice(2);
const { Client } = await import(path.join(packageDir, 'index.js'));
const client = new Client({ ...JSON.parse(optionsJson), dlq: new DirectoryStore(dir) });
const tasks = Array.from({ length: Number(n) }, (_, i) => ({ type: 'recaptcha_v2', sitekey: '6Le-SITEKEY', pageUrl: `https://example.com/${name}/${i}` }));
const results = await client.solveMany(tasks, { concurrency: tasks.length });
console.log(JSON.stringify(results.map((r) => (r.ok ? { cost: r.solution.cost } : { reason: r.error.record?.reason, description: r.error.record?.description }))));
const input = readline.createInterface({ input: process.stdin });
await new Promise((resolve) => input.once('line', resolve).once('close', resolve));
input.close();
await client.close();
