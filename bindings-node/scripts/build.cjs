#!/usr/bin/env node
// Builds the native addon from source: `npm run build` for contributors (users install the
// prebuilt addon of their platform, a per-platform package under npm/, and never run this).
// napi build writes the addon next to package.json and the loader native.cjs (which looks for
// that local file first, then for the platform package). Arguments after `--` go to napi build
// (package.sh passes `--target x86_64-unknown-linux-gnu` with the zig environment of its wheel build, for glibc 2.17).
// CAPTCHA_DLQ_BUILD_PROFILE=debug builds faster, unoptimised (development); any other cargo profile of the
// workspace (CI's `ci`) is passed to cargo as it is; unset, the addon is built `release`.
'use strict';
const { spawnSync } = require('node:child_process');
const path = require('node:path');
const fs = require('node:fs');

const root = path.resolve(__dirname, '..');

function fail(message) {
  console.error(`captcha-dlq build: ${message}`);
  process.exit(1);
}

// Checked first: without cargo, napi build fails deep inside `cargo metadata` with a stack trace.
const cargo = spawnSync('cargo', ['--version'], { encoding: 'utf8' });
if (cargo.error || cargo.status !== 0) {
  fail(
    'building the addon from source needs Rust (cargo), which is not on PATH.\n' +
      '  Install it with rustup (https://rustup.rs): curl --proto \'=https\' --tlsv1.2 -sSf https://sh.rustup.rs | sh\n' +
      '  then open a new shell and run `npm run build` again.\n' +
      '  (To use captcha-dlq rather than build it, `npm install captcha-dlq` needs no Rust: it fetches the prebuilt addon.)',
  );
}

let cliPackage;
try {
  cliPackage = require.resolve('@napi-rs/cli/package.json', { paths: [root] });
} catch {
  fail('@napi-rs/cli (a dev dependency) is missing: run `npm install` in bindings-node first.');
}
const meta = JSON.parse(fs.readFileSync(cliPackage, 'utf8'));
const bin = typeof meta.bin === 'string' ? meta.bin : meta.bin.napi;
const cli = path.join(path.dirname(cliPackage), bin);

// The page detector's one checked-in copy is page-detector-js/page-detector.js (the crate the Python extension
// embeds it from); the package ships it as lib/page-detector.js, a file usable as a content script.
const detector = path.join(root, '..', 'page-detector-js', 'page-detector.js');
if (!fs.existsSync(detector)) fail(`the page detector ${detector} is missing: build from a checkout of the repository`);
fs.copyFileSync(detector, path.join(root, 'lib', 'page-detector.js'));
// The JS API both npm packages share (the wrapper over the native surface, the error classes, the types) has its
// one copy in js-api/; this package ships it as lib/client.js, lib/errors.js and index.d.ts.
const jsApi = path.join(root, '..', 'js-api');
for (const [from, to] of [['client.js', 'lib/client.js'], ['errors.js', 'lib/errors.js'], ['index.d.ts', 'index.d.ts']]) {
  const source = path.join(jsApi, from);
  if (!fs.existsSync(source)) fail(`the shared JS API file ${source} is missing: build from a checkout of the repository`);
  fs.copyFileSync(source, path.join(root, to));
}

const profile = process.env.CAPTCHA_DLQ_BUILD_PROFILE || 'release';
const args = [cli, 'build', '--platform', '--js', 'native.cjs', '--dts', 'native.d.cts'];
if (profile === 'release') args.push('--release');
else if (profile !== 'debug') args.push('--profile', profile);
args.push(...process.argv.slice(2));
console.error(`captcha-dlq build: cargo build of the addon (${profile}); this takes minutes the first time`);
const r = spawnSync(process.execPath, args, { cwd: root, stdio: 'inherit' });
if (r.error) fail(`could not run napi build: ${r.error.message}`);
process.exit(r.status ?? 1);
