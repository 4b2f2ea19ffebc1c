#!/usr/bin/env node
// Builds the native addon with `napi build` (run by `npm install`). The loader and raw
// typings go to native.cjs / native.d.cts; index.js / index.d.ts are the public API.
// CAPTCHA_DLQ_BUILD_PROFILE=debug builds faster, unoptimised (CI, development).
'use strict';
const { spawnSync } = require('node:child_process');
const path = require('node:path');
const fs = require('node:fs');

const root = path.resolve(__dirname, '..');

function findCli() {
  try {
    return require.resolve('@napi-rs/cli/package.json', { paths: [root] });
  } catch {
    return null;
  }
}

// `npm install ./bindings-node` from another project links this folder without
// installing its dependencies; fetch them here so napi build is available.
let pkg = findCli();
if (!pkg) {
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const r = spawnSync(npm, ['install', '--no-save', '--no-audit', '--no-fund', '--ignore-scripts', '--omit=dev'], { cwd: root, stdio: 'inherit' });
  pkg = r.status === 0 ? findCli() : null;
  if (!pkg) {
    console.error('captcha-dlq: @napi-rs/cli is missing and could not be installed; run `npm install` in the package folder');
    process.exit(1);
  }
}
const meta = JSON.parse(fs.readFileSync(pkg, 'utf8'));
const bin = typeof meta.bin === 'string' ? meta.bin : meta.bin.napi;
const cli = path.join(path.dirname(pkg), bin);

const debug = process.env.CAPTCHA_DLQ_BUILD_PROFILE === 'debug';
const args = [cli, 'build', '--platform', '--js', 'native.cjs', '--dts', 'native.d.cts'];
if (!debug) args.push('--release');
const r = spawnSync(process.execPath, args, { cwd: root, stdio: 'inherit' });
if (r.error) {
  console.error(`captcha-dlq: could not run napi build: ${r.error.message}`);
  process.exit(1);
}
process.exit(r.status ?? 1);
