/**
 * Install the VSIXes the editors start with into .cache/e2e-installed/, before any test file
 * runs: `node out/e2e/install.js A.vsix B.vsix ...` (make e2e-ready). The tests install what is
 * missing themselves, so a test file run alone needs none of this.
 */

import * as path from 'node:path';
import { installAhead } from './lib/codeServer';

const vsixes = process.argv.slice(2).map((vsix) => path.resolve(vsix));
if (vsixes.length === 0) {
  console.error('usage: node out/e2e/install.js VSIX...');
  process.exit(2);
}
installAhead(vsixes).catch((err: unknown) => {
  console.error(`could not install ${vsixes.join(', ')} for the end-to-end tests: ${String(err)}`);
  process.exit(1);
});
