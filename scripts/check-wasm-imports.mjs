// Fails when a .wasm module imports anything from the `env` module (unresolved C/libc symbols
// would make it unloadable in browsers). Usage: node scripts/check-wasm-imports.mjs FILE.wasm
import { readFileSync } from "node:fs";

const file = process.argv[2];
if (!file) { console.error("usage: check-wasm-imports.mjs FILE.wasm"); process.exit(2); }
const mod = new WebAssembly.Module(readFileSync(file));
const imports = WebAssembly.Module.imports(mod);
const env = imports.filter((i) => i.module === "env");
const modules = [...new Set(imports.map((i) => i.module))];
if (env.length > 0) {
  console.error(`${file} imports from env: ${env.map((i) => i.name).join(", ")}`);
  process.exit(1);
}
console.log(`${file}: ${imports.length} imports, from ${modules.join(", ")}; none from env`);
