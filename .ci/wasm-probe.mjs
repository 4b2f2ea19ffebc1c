// Checks the core's wasm build: no imports at all (in particular none from
// `env`), and the seeds' batch gives the same answer as natively.
import { readFileSync } from 'node:fs';

const path = process.argv[2];
const module = new WebAssembly.Module(readFileSync(path));
const imports = WebAssembly.Module.imports(module);
if (imports.length > 0) {
  console.error(`wasm probe: the core imports from its host: ${JSON.stringify(imports)}`);
  process.exit(1);
}
const { exports } = new WebAssembly.Instance(module, {});
const answer = exports.probe_seeds_batch();
if (answer !== 324) {
  console.error(`wasm probe: expected 324 (3 solved, 2 dead-lettered with 4 attempts), got ${answer}`);
  process.exit(1);
}
console.log(`wasm probe: ${path} has no imports; seeds' batch on wasm32 = ${answer} (3 solved, 2 dead-lettered, 4 attempts)`);
