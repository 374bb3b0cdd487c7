/**
 * The local object store (fauxqs's S3 API behind local/object-store.ts requireSignedS3) refuses
 * what S3 refuses: unsigned reads, writes and lists, expired or tampered presigned URLs, a URL's
 * query string on another key, a URL used with another method, a foreign or wrong key, a body that
 * is not the one signed. Signed requests (the SDK's, the product's presigned URLs) work.
 */
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { Sha256 } from '@smithy/core/checksum';
import { SignatureV4 } from '@smithy/signature-v4';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalQueue, startLocalQueue } from '../../local/queue.js';
import { ensureBucket } from '../../local/resources.js';
import { objectSize, presignedGetUrl, presignedPutUrl, putObject, readObject } from '../../shared/db/objects.js';

const BUCKET = 'crm-store-test';
const LOCAL = { accessKeyId: 'local', secretAccessKey: 'local' };
let store: LocalQueue;
let s3: S3Client;
const client = (credentials = LOCAL) => new S3Client({ endpoint: store.endpoint, forcePathStyle: true, region: 'us-east-1', credentials });

beforeAll(async () => {
  store = await startLocalQueue('unused');
  await ensureBucket(store.endpoint, BUCKET);
  // The product's presigned URLs point at the local store.
  process.env.AWS_ENDPOINT_URL_S3 = store.endpoint;
  s3 = client();
});
afterAll(async () => {
  s3.destroy();
  await store.stop();
});

/** S3's refusal: the status and the XML error's code. */
async function refusal(res: Response): Promise<{ status: number; code: string }> {
  const text = await res.text();
  return { status: res.status, code: /<Code>([^<]+)<\/Code>/.exec(text)?.[1] ?? '' };
}

const read = async (key: string) => (await readObject(BUCKET, key, 1_000_000)).toString();

describe('refused', () => {
  const key = 'exports/account-a/file.csv';
  beforeAll(async () => {
    await putObject(BUCKET, key, 'secret,data\n', 'text/csv');
  });

  it('unsigned GET, PUT, list of the bucket and list of buckets: 403 AccessDenied, nothing changed', async () => {
    expect(await refusal(await fetch(`${store.endpoint}/${BUCKET}/${key}`))).toEqual({ status: 403, code: 'AccessDenied' });
    expect(await refusal(await fetch(`${store.endpoint}/${BUCKET}/${key}`, { method: 'PUT', body: '' }))).toEqual({ status: 403, code: 'AccessDenied' });
    expect(await refusal(await fetch(`${store.endpoint}/${BUCKET}?list-type=2`))).toEqual({ status: 403, code: 'AccessDenied' });
    expect(await refusal(await fetch(`${store.endpoint}/`))).toEqual({ status: 403, code: 'AccessDenied' });
    expect(await refusal(await fetch(`${store.endpoint}/${BUCKET}/${key}`, { method: 'DELETE' }))).toEqual({ status: 403, code: 'AccessDenied' });
    expect((await fetch(`${store.endpoint}/${BUCKET}/${key}`, { method: 'HEAD' })).status).toBe(403);
    expect(await read(key)).toBe('secret,data\n');
  });

  it('an expired presigned URL: 403 AccessDenied', async () => {
    const url = await getSignedUrl(s3, new GetObjectCommand({ Bucket: BUCKET, Key: key }), { expiresIn: 60, signingDate: new Date(Date.now() - 5 * 60_000) });
    expect(await refusal(await fetch(url))).toEqual({ status: 403, code: 'AccessDenied' });
    // The same URL signed now works: the refusal is the expiry.
    expect((await fetch(await getSignedUrl(s3, new GetObjectCommand({ Bucket: BUCKET, Key: key }), { expiresIn: 60 }))).status).toBe(200);
  });

  it('a tampered signature, expiry or date: 403 SignatureDoesNotMatch', async () => {
    const url = new URL(await presignedGetUrl(BUCKET, key, 900));
    const signature = url.searchParams.get('X-Amz-Signature')!;
    const variants = [
      (u: URL) => u.searchParams.set('X-Amz-Signature', `${signature.slice(0, -1)}${signature.endsWith('0') ? '1' : '0'}`),
      (u: URL) => u.searchParams.set('X-Amz-Expires', '604800'),
      (u: URL) => u.searchParams.set('x-id', 'PutObject'),
      (u: URL) => u.searchParams.append('extra', '1'),
    ];
    for (const change of variants) {
      const tampered = new URL(url);
      change(tampered);
      expect(await refusal(await fetch(tampered)), tampered.search).toEqual({ status: 403, code: 'SignatureDoesNotMatch' });
    }
    expect((await fetch(url)).status).toBe(200);
  });

  it("another key with a URL's query string (another account's export): 403 SignatureDoesNotMatch", async () => {
    await putObject(BUCKET, 'exports/account-b/file.csv', 'b', 'text/csv');
    const url = new URL(await presignedGetUrl(BUCKET, 'exports/account-b/file.csv', 900));
    expect(await refusal(await fetch(`${store.endpoint}/${BUCKET}/${key}${url.search}`))).toEqual({ status: 403, code: 'SignatureDoesNotMatch' });
    expect(await refusal(await fetch(`${store.endpoint}/${BUCKET}?list-type=2&${url.search.slice(1)}`))).toEqual({ status: 403, code: 'SignatureDoesNotMatch' });
  });

  it('a presigned URL used with another method: 403 SignatureDoesNotMatch, nothing overwritten', async () => {
    const get = await presignedGetUrl(BUCKET, key, 900);
    expect(await refusal(await fetch(get, { method: 'PUT', body: '' }))).toEqual({ status: 403, code: 'SignatureDoesNotMatch' });
    expect(await refusal(await fetch(get, { method: 'DELETE' }))).toEqual({ status: 403, code: 'SignatureDoesNotMatch' });
    const put = await presignedPutUrl(BUCKET, key, 900);
    expect(await refusal(await fetch(put))).toEqual({ status: 403, code: 'SignatureDoesNotMatch' });
    expect(await read(key)).toBe('secret,data\n');
  });

  it('SDK calls with an unknown key or a wrong secret: InvalidAccessKeyId, SignatureDoesNotMatch', async () => {
    for (const [credentials, code] of [
      [{ accessKeyId: 'someone', secretAccessKey: 'local' }, 'InvalidAccessKeyId'],
      [{ accessKeyId: 'local', secretAccessKey: 'guess' }, 'SignatureDoesNotMatch'],
    ] as const) {
      const other = client(credentials);
      try {
        await expect(other.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }))).rejects.toMatchObject({ name: code });
        await expect(other.send(new ListObjectsV2Command({ Bucket: BUCKET }))).rejects.toMatchObject({ name: code });
        await expect(other.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: 'x' }))).rejects.toMatchObject({ name: code });
      } finally {
        other.destroy();
      }
    }
    expect(await read(key)).toBe('secret,data\n');
  });

  it('a header-signed PUT whose body is not the one signed: 400 XAmzContentSHA256Mismatch; a stale date: RequestTimeTooSkewed', async () => {
    const target = new URL(`${store.endpoint}/${BUCKET}/${key}`);
    const signer = new SignatureV4({ credentials: LOCAL, region: 'us-east-1', service: 's3', sha256: Sha256, uriEscapePath: false, applyChecksum: true });
    const signed = async (body: string, signingDate = new Date()) =>
      (await signer.sign({ method: 'PUT', protocol: 'http:', hostname: target.hostname, port: Number(target.port), path: target.pathname, query: {}, headers: { host: target.host }, body }, { signingDate })).headers;
    const headers = await signed('the signed body');
    expect(await refusal(await fetch(target, { method: 'PUT', headers, body: 'another body' }))).toEqual({ status: 400, code: 'XAmzContentSHA256Mismatch' });
    expect(await refusal(await fetch(target, { method: 'PUT', headers: await signed('x', new Date(Date.now() - 20 * 60_000)), body: 'x' }))).toEqual({ status: 403, code: 'RequestTimeTooSkewed' });
    expect(await read(key)).toBe('secret,data\n');
    // Signed as sent: accepted.
    expect((await fetch(target, { method: 'PUT', headers, body: 'the signed body' })).status).toBe(200);
    expect(await read(key)).toBe('the signed body');
  });
});

describe('signed', () => {
  it('presigned PUT, HEAD and GET of any key work, and each URL serves its key only', async () => {
    const keyPart = fc.string({ unit: 'grapheme', minLength: 1, maxLength: 20 }).filter((s) => !s.includes('/') && s !== '.' && s !== '..');
    await fc.assert(
      fc.asyncProperty(keyPart, fc.string({ maxLength: 100 }), async (name, content) => {
        const key = `imports/${name} +x`;
        const put = await fetch(await presignedPutUrl(BUCKET, key, 900), { method: 'PUT', body: content });
        expect(put.status, key).toBe(200);
        expect(await objectSize(BUCKET, key)).toBe(Buffer.byteLength(content));
        const get = await fetch(await presignedGetUrl(BUCKET, key, 900));
        expect(get.status, key).toBe(200);
        expect(await get.text()).toBe(content);
        // The URL's signature does not carry to the key's sibling.
        const sibling = new URL(await presignedGetUrl(BUCKET, key, 900));
        sibling.pathname = `${sibling.pathname}2`;
        expect((await fetch(sibling)).status).toBe(403);
      }),
      { numRuns: 15, seed: 6 },
    );
  });

  it('SDK calls (put, get, list) work', async () => {
    await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'sdk/a.txt', Body: 'via the SDK' }));
    const listed = await s3.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'sdk/' }));
    expect(listed.Contents?.map((c) => c.Key)).toEqual(['sdk/a.txt']);
    expect(await read('sdk/a.txt')).toBe('via the SDK');
  });
});
