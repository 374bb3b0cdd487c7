/**
 * Presigned URLs come from the SDK's presigner without constructing the S3 client
 * (shared/db/objects.ts): they must be the URLs `getSignedUrl` gives with the client.
 */
import { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

const NOW = new Date('2026-11-20T10:11:12Z');
const ENV = { AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE', AWS_SECRET_ACCESS_KEY: 'secret', AWS_SESSION_TOKEN: 'token/with+chars=' };

function clientUrl(region: string, endpoint: string | undefined, command: PutObjectCommand | GetObjectCommand, expiresIn: number) {
  const client = new S3Client({
    region,
    maxAttempts: 4,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    ...(endpoint ? { endpoint, forcePathStyle: true } : {}),
  });
  return getSignedUrl(client, command, { expiresIn });
}

describe('presigned URLs without the S3 client', () => {
  const saved = { ...process.env };
  beforeEach(() => {
    vi.useFakeTimers({ now: NOW, toFake: ['Date'] });
    Object.assign(process.env, ENV);
    delete process.env.AWS_PROFILE;
  });
  afterEach(() => {
    vi.useRealTimers();
    process.env = { ...saved };
  });

  const cases = [
    { region: 'eu-west-1', endpoint: undefined, bucket: 'crm-imports-bucket-1a2b3c', key: 'imports/acc-1/0b6f.csv' },
    { region: 'cn-north-1', endpoint: undefined, bucket: 'crm-imports', key: 'exports/acc 2/é+x.csv' },
    { region: 'us-east-1', endpoint: undefined, bucket: 'Not.A.Dns.Label', key: 'imports/a/b.csv' },
    { region: 'us-east-1', endpoint: 'http://127.0.0.1:4566', bucket: 'crm-imports', key: 'imports/acc-3/x.csv' },
  ];
  for (const c of cases) {
    it(`${c.endpoint ?? c.region} ${c.bucket}`, async () => {
      process.env.AWS_REGION = c.region;
      if (c.endpoint) process.env.AWS_ENDPOINT_URL_S3 = c.endpoint;
      else delete process.env.AWS_ENDPOINT_URL_S3;
      // A fresh module: like the S3 client, the presigner resolves the region once per process.
      vi.resetModules();
      const { presignedGetUrl, presignedPutUrl } = await import('../../shared/db/objects.js');
      const put = await presignedPutUrl(c.bucket, c.key, 900);
      const get = await presignedGetUrl(c.bucket, c.key, 600);
      expect(put).toBe(await clientUrl(c.region, c.endpoint, new PutObjectCommand({ Bucket: c.bucket, Key: c.key }), 900));
      expect(get).toBe(await clientUrl(c.region, c.endpoint, new GetObjectCommand({ Bucket: c.bucket, Key: c.key }), 600));
    });
  }
});
