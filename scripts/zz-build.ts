import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildDeployedBundles, loadBundle } from '../test/helpers/deployed.js';
let t = performance.now();
const dir = mkdtempSync(join(tmpdir(), 'zz-'));
const files = await buildDeployedBundles(dir);
console.log('build ms', performance.now() - t, files.size);
t = performance.now();
for (const [n, f] of files) { try { await loadBundle(f); } catch (e) { console.log('LOAD FAIL', n, String(e).slice(0, 300)); } }
console.log('load ms', performance.now() - t);
