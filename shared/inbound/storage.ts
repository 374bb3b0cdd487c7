/**
 * The raw messages SES stores in S3 (lib/inbound-email.ts): the only S3 calls of inbound email.
 * `AWS_ENDPOINT_URL_S3` (the SDK's own variable) may point at a local S3 API (path-style).
 */
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { optionalEnv } from '../config/env.js';

let cached: { endpoint: string | undefined; client: S3Client } | undefined;

function s3(): S3Client {
  const endpoint = optionalEnv('AWS_ENDPOINT_URL_S3');
  if (!cached || cached.endpoint !== endpoint) {
    cached = { endpoint, client: new S3Client({ maxAttempts: 4, ...(endpoint ? { endpoint, forcePathStyle: true } : {}) }) };
  }
  return cached.client;
}

/** The object's bytes, or `too_large` (nothing read past the size check) when it exceeds `maxBytes`. */
export async function readRawMessage(bucket: string, key: string, maxBytes: number): Promise<Buffer | 'too_large'> {
  const out = await s3().send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  if ((out.ContentLength ?? 0) > maxBytes) {
    (out.Body as { destroy?: () => void } | undefined)?.destroy?.();
    return 'too_large';
  }
  const bytes = await out.Body?.transformToByteArray();
  return Buffer.from(bytes ?? new Uint8Array());
}
