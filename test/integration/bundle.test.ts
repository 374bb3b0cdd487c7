import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { benchBundles, bundleFunction } from '../../bench/bundles.js';
import { apiEvent } from '../../local/invoke.js';
import { lambdaContext } from '../../local/server.js';
import { newAccount } from '../helpers/api.js';

describe('Lambda bundles (the stack\'s esbuild settings)', () => {
  it('bundle contacts-create and contacts-get that work against DynamoDB with credentials from the environment', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'crm-bundle-'));
    const bundles: Record<string, string> = {};
    for (const op of ['contacts/create', 'contacts/get']) {
      const outfile = join(dir, `${op.replace('/', '-')}.mjs`);
      const inputs = Object.keys((await bundleFunction(`${op}.ts`, outfile)).inputs);
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

    // Idempotency runs on the bundled field-path JMESPath (lib/jmespath-fields.ts): a retry gets
    // the first result and creates nothing; the same key with another body is a conflict.
    const key = { 'idempotency-key': `bundle-${id}` };
    const first = await create(apiEvent('contacts-create', { first_name: 'Once' }, auth, key), lambdaContext('contacts-create'));
    const retry = await create(apiEvent('contacts-create', { first_name: 'Once' }, auth, key), lambdaContext('contacts-create'));
    expect(first.statusCode).toBe(200);
    expect(JSON.parse(retry.body).result).toEqual(JSON.parse(first.body).result);
    const other = await create(apiEvent('contacts-create', { first_name: 'Twice' }, auth, key), lambdaContext('contacts-create'));
    expect(other.statusCode).toBe(409);
    expect(JSON.parse(other.body).error.code).toBe('contacts.conflict');
  });
});

/** Every API operation's bundle ≤ 300 KB (docs/performance.md, "Cold start"). */
const API_BUNDLE_LIMIT = 300 * 1024;

/**
 * The largest operation of each kind (bundling all ~90 takes too long for the suite; kinds share
 * their modules, so the largest stands for the rest: a record family's operations carry its own
 * definition only, and the activities' is the largest). `npm run bench:bundles` sizes every one.
 */
const REPRESENTATIVES = [
  'contacts-get',
  'activities-list', // the list engine, which the record writes do not carry
  'activities-update',
  'contacts-merge',
  'trash-list',
  'exports-get', // presigned URL without the S3 client
  'exports-list',
  'webhooks-update', // KMS user
  'custom-fields-update',
  'contacts-batch-get', // one batch function, not the whole batch service
  'inbound-emails-get', // not the whole record service
  'imports-start', // HEAD through fetch, without the S3 client
  'webhooks-test', // SQS client; URL checks on Node's BlockList (no ipaddr.js)
  'webhooks-rotate-secret', // KMS user
  'activities-create', // Powertools idempotency on the field-path JMESPath (lib/jmespath-fields.ts)
  'activities-batch-create',
  'contacts-batch-upsert',
  'webhooks-create', // idempotency + KMS + URL checks; event names written out
  'exports-create', // idempotency + SendMessage through fetch (no SQS client), no presigner
  'imports-create', // idempotency (the inline file is a PUT through fetch, the job's message SendMessage through fetch)
  'custom-fields-create',
  'erasures-create', // idempotency + SendMessage through fetch + the contact it erases, read by type (no record store)
];

describe('API bundle sizes', () => {
  it('the largest operation of each kind is within 300 KB', { timeout: 60_000 }, async () => {
    const rows = await benchBundles({ only: REPRESENTATIVES, init: false });
    expect(rows.map((r) => r.name).sort()).toEqual([...REPRESENTATIVES].sort());
    const sizes = rows.map((r) => ({ name: r.name, kb: Math.round(r.bytes / 102.4) / 10, over: r.bytes > API_BUNDLE_LIMIT }));
    expect(sizes.filter((s) => s.over)).toEqual([]);
  });
});
