/**
 * A client generated from the OpenAPI document (openapi-typescript + openapi-fetch, as a user
 * outside this repo would) type-checks against real calls with no casts.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import openapiTS, { astToString } from 'openapi-typescript';
import { afterAll, describe, expect, it } from 'vitest';
import { operations } from '../../functions/operations.js';
import { buildOpenApiDocument } from '../../shared/openapi/document.js';

// Inside the repo (node_modules resolve from here), in a git-ignored `.tmp*` folder.
const dir = mkdtempSync(join(process.cwd(), '.tmp-openapi-client-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('a client generated from /openapi.json', () => {
  it('type-checks typical calls without casts', async () => {
    const ast = await openapiTS(buildOpenApiDocument(operations) as never);
    writeFileSync(join(dir, 'api.d.ts'), astToString(ast));
    writeFileSync(
      join(dir, 'use.ts'),
      `import createClient from 'openapi-fetch';
import type { paths } from './api.js';
const client = createClient<paths>({ baseUrl: 'http://127.0.0.1:3000' });
export async function use(): Promise<string> {
  const created = await client.POST('/api/contacts-create', { body: { first_name: 'Ada', tags: ['vip'] } });
  const first: string | undefined = created.data?.result.first_name;
  // A 429 may be API Gateway's own body ({ message }), so the error is narrowed, not cast.
  const failed = created.error;
  const code: string | undefined = failed && 'error' in failed ? failed.error.code : failed?.message;
  const page = await client.POST('/api/projects-list', { body: { status: ['open'], limit: 10 } });
  const next: string | undefined = page.data?.result.next_cursor;
  const ids: string[] | undefined = page.data?.result.items.map((p) => p.id);
  const count: number | null | undefined = (await client.POST('/api/companies-get', { body: { id: 'x' } })).data?.result.employee_count;
  await client.POST('/api/webhooks-list', {});
  const batch = await client.POST('/api/contacts-batch-create', { body: { items: [{ first_name: 'Ada' }, { first_name: 'Grace', email: 'g@example.com' }] } });
  const item = batch.data?.result.results[0];
  const batchName: string | undefined = item && item.ok ? item.record?.first_name : item?.error.code;
  return [first, code, next, ids?.join(','), String(count), batchName].join();
}
`,
    );
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({ compilerOptions: { strict: true, noEmit: true, module: 'NodeNext', moduleResolution: 'NodeNext', target: 'ES2022', skipLibCheck: true, types: [] }, files: ['use.ts'] }),
    );
    let output = '';
    try {
      execFileSync(process.execPath, [join(process.cwd(), 'node_modules/typescript/bin/tsc'), '-p', dir], { encoding: 'utf8' });
    } catch (error) {
      output = String((error as { stdout?: string }).stdout ?? error);
    }
    expect(output).toBe('');
  }, 120_000);
});
