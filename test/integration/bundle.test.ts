import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { statSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { FUNCTIONS } from '../../functions/topology.js';
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

/** Issue 18: every API operation's bundle ≤ 300 KB (docs/performance.md, "Cold start"). */
const API_BUNDLE_LIMIT = 300 * 1024;

/**
 * The largest operation of each kind (bundling all ~90 takes too long for the suite; kinds share
 * their modules, so the largest stands for the rest). Kinds that do not meet the target yet keep
 * a ceiling of today's size, so they cannot grow unnoticed; see docs/performance.md for why.
 */
const REPRESENTATIVES: Record<string, number> = {
  'contacts-get': API_BUNDLE_LIMIT,
  'contacts-list': API_BUNDLE_LIMIT,
  'contacts-update': API_BUNDLE_LIMIT,
  'contacts-merge': API_BUNDLE_LIMIT,
  'trash-list': API_BUNDLE_LIMIT,
  'exports-get': API_BUNDLE_LIMIT, // presigned URL without the S3 client
  'exports-list': API_BUNDLE_LIMIT,
  'webhooks-update': API_BUNDLE_LIMIT, // KMS user
  'custom-fields-update': API_BUNDLE_LIMIT,
  'contacts-batch-get': API_BUNDLE_LIMIT, // one batch function, not the whole batch service
  'inbound-emails-get': API_BUNDLE_LIMIT, // not the whole record service
  'imports-start': API_BUNDLE_LIMIT, // HEAD through fetch, without the S3 client
  // Not met yet (docs/performance.md): the limits are today's sizes rounded up.
  'webhooks-test': 317 * 1024, // SQS client, the URL checks' ipaddr.js
  'webhooks-rotate-secret': 318 * 1024, // KMS user
  'contacts-create': 336 * 1024, // Powertools idempotency (+ JMESPath)
  'contacts-batch-create': 342 * 1024,
  'webhooks-create': 365 * 1024, // idempotency + KMS
  'imports-create': 334 * 1024, // idempotency (the inline file is a PUT through fetch)
};

describe('API bundle sizes', () => {
  it('the largest operation of each kind is within its limit', { timeout: 60_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'crm-bundle-size-'));
    const sizes = await Promise.all(Object.entries(REPRESENTATIVES).map(async ([name, limit]) => {
      const spec = FUNCTIONS.find((f) => f.name === name);
      expect(spec, name).toBeDefined();
      const outfile = join(dir, `${name}.mjs`);
      await build({
        entryPoints: [join(import.meta.dirname, '..', '..', 'functions', spec!.entry)],
        bundle: true, outfile, logLevel: 'silent',
        ...LAMBDA_BUNDLE, mainFields: [...LAMBDA_BUNDLE.mainFields], banner: { js: LAMBDA_BUNDLE.banner },
      });
      return { name, kb: Math.round(statSync(outfile).size / 102.4) / 10, limit_kb: limit / 1024, over: statSync(outfile).size > limit };
    }));
    expect(sizes.filter((s) => s.over)).toEqual([]);
  });
});
