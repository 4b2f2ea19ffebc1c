#!/usr/bin/env node
// Builds the native addon with `napi build` (run by `npm install`). The loader and
// raw typings go to native.js / native.d.ts; index.js / index.d.ts are the public API.
// CAPTCHA_DLQ_BUILD_PROFILE=debug builds faster, unoptimised (CI, development).
'use strict';
const { spawnSync } = require('node:child_process');
const path = require('node:path');
const fs = require('node:fs');

const root = path.resolve(__dirname, '..');
const pkg = require.resolve('@napi-rs/cli/package.json', { paths: [root] });
const meta = JSON.parse(fs.readFileSync(pkg, 'utf8'));
const bin = typeof meta.bin === 'string' ? meta.bin : meta.bin.napi;
const cli = path.join(path.dirname(pkg), bin);

const debug = process.env.CAPTCHA_DLQ_BUILD_PROFILE === 'debug';
const args = [cli, 'build', '--platform', '--js', 'native.js', '--dts', 'native.d.ts'];
if (!debug) args.push('--release');
const r = spawnSync(process.execPath, args, { cwd: root, stdio: 'inherit' });
if (r.error) {
  console.error(`captcha-dlq: could not run napi build: ${r.error.message}`);
  process.exit(1);
}
process.exit(r.status ?? 1);
