import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { LAMBDA_BUNDLE } from '../../lib/bundling.js';
import { apiEvent } from '../../local/invoke.js';
import { lambdaContext } from '../../local/server.js';
import { newAccount } from '../helpers/api.js';

describe('Lambda bundles (the stack\'s esbuild settings)', () => {
  it('bundle contacts-create and contacts-get that work against DynamoDB with credentials from the environment', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'crm-bundle-'));
    const bundles: Record<string, string> = {};
    for (const op of ['contacts/create', 'contacts/get']) {
      const outfile = join(dir, `${op.replace('/', '-')}.mjs`);
      const result = await build({
        entryPoints: [join(import.meta.dirname, '..', '..', 'functions', `${op}.ts`)],
        bundle: true, outfile, logLevel: 'silent', metafile: true,
        ...LAMBDA_BUNDLE, mainFields: [...LAMBDA_BUNDLE.mainFields], banner: { js: LAMBDA_BUNDLE.banner },
      });
      const inputs = Object.keys(result.metafile.inputs);
      expect(inputs.some((f) => f.includes('credential-provider-sso'))).toBe(false);
      expect(inputs.some((f) => f.includes('lambda-credentials'))).toBe(true);
      bundles[op] = outfile;
    }
    const auth = newAccount();
    const create = (await import(pathToFileURL(bundles['contacts/create']!).href)).handler;
    const get = (await import(pathToFileURL(bundles['contacts/get']!).href)).handler;
    const created = await create(apiEvent('contacts-create', { first_name: 'Bundled' }, auth), lambdaContext('contacts-create'));
    expect(created.statusCode).toBe(200);
    const id = JSON.parse(created.body).result.id;
    const got = await get(apiEvent('contacts-get', { id }, auth), lambdaContext('contacts-get'));
    expect(JSON.parse(got.body).result).toMatchObject({ id, first_name: 'Bundled' });
  });
});
