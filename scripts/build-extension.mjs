// Bundle the TypeScript with esbuild. Type checking is `tsc --noEmit` (make test-extension).
//   node scripts/build-extension.mjs            -> dist/extension.js (the extension), after
//                                                  scripts/generate_agent_patterns.mjs
//   node scripts/build-extension.mjs --tests    -> out/unit/*.test.js (node:test unit tests)
//   node scripts/build-extension.mjs --e2e      -> out/e2e/*.test.js and install.js + the test helper extension + the Python extension stand-in
import { build } from 'esbuild';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { updateAgentPatterns } from './generate_agent_patterns.mjs';

const mode = process.argv[2] ?? '--extension';
const common = { bundle: true, platform: 'node', target: 'node20', format: 'cjs', logLevel: 'warning' };
const tsIn = (dir, suffix) =>
  readdirSync(dir)
    .filter((f) => f.endsWith(suffix))
    .map((f) => join(dir, f));

if (mode === '--extension') {
  // The agent-file patterns the bundle and the manifest carry follow the server's catalogue.
  updateAgentPatterns();
  await build({
    ...common,
    entryPoints: ['extension/src/extension.ts'],
    outfile: 'dist/extension.js',
    external: ['vscode'],
    minify: true,
    sourcemap: false,
    metafile: false,
  });
} else if (mode === '--tests') {
  await build({ ...common, entryPoints: tsIn('extension/test', '.test.ts'), outdir: 'out/unit', external: ['vscode'] });
} else if (mode === '--e2e') {
  await build({
    ...common,
    entryPoints: [...tsIn('tests/e2e', '.test.ts'), 'tests/e2e/install.ts'],
    outdir: 'out/e2e',
    external: ['playwright-core'],
  });
  await build({
    ...common,
    entryPoints: ['tests/e2e/helper-extension/src/extension.ts'],
    outfile: 'tests/e2e/helper-extension/dist/extension.js',
    external: ['vscode'],
  });
  await build({
    ...common,
    entryPoints: ['tests/e2e/python-standin/src/extension.ts'],
    outfile: 'tests/e2e/python-standin/dist/extension.js',
    external: ['vscode'],
  });
} else {
  console.error(`unknown mode ${mode}`);
  process.exit(2);
}
