/**
 * `npm run openapi`: writes openapi.json (OpenAPI 3.1) generated from the operation registry
 * and the valibot schemas (shared/openapi/). The file is a build output, not committed; the
 * local server serves the same document at GET /openapi.json.
 *
 * Usage: npm run openapi [-- <output path>] (default: openapi.json in the project root)
 */
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { buildOpenApiDocument } from '../shared/openapi/document.js';
import { operations } from '../functions/operations.js';

const out = resolve(process.argv[2] ?? 'openapi.json');
const doc = buildOpenApiDocument(operations);
const undocumented = Object.entries(doc.paths).filter(([, p]) => p.post['x-undocumented']).map(([path]) => path);
writeFileSync(out, `${JSON.stringify(doc, null, 2)}\n`);
console.log(`wrote ${out}: ${Object.keys(doc.paths).length} operations, ${Object.keys(doc.webhooks).length} webhook events`);
if (undocumented.length > 0) {
  console.error(`operations without a description in shared/openapi/operations.ts: ${undocumented.join(', ')}`);
  process.exitCode = 1;
}
