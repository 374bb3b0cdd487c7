/**
 * Object storage (S3): the import and export files and the raw inbound messages. One client for all.
 * `AWS_ENDPOINT_URL_S3` (the SDK's own variable) may point at a local S3 API (fauxqs in local
 * mode), addressed path-style (`http://127.0.0.1:<port>/<bucket>/<key>`).
 *
 * Presigned URLs do not construct the S3 client: the SDK's presigner (`S3RequestPresigner`, what
 * `getSignedUrl` calls after resolving the client's endpoint) signs a request for the bucket's
 * endpoint directly, so a function that only hands out URLs (exports-get/-list/-create) does not
 * bundle the S3 client (~200 KB minified, its XML protocol and every operation's schema).
 * `test/unit/presign.test.ts` checks the URLs are those `getSignedUrl` gives.
 */
import type { Readable } from 'node:stream';
import {
  DeleteObjectCommand,
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  GetObjectCommand,
  S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { S3RequestPresigner } from '@aws-sdk/s3-request-presigner';
// The SDK's own pieces, the ones the S3 client uses for the same steps (packages of the clients above).
import { isVirtualHostableS3Bucket, partition } from '@aws-sdk/core/client';
import { formatUrl } from '@aws-sdk/core/util';
import { defaultProvider } from '@aws-sdk/credential-provider-node';
import { Sha256 } from '@smithy/core/checksum';
import { loadConfig, NODE_REGION_CONFIG_FILE_OPTIONS, NODE_REGION_CONFIG_OPTIONS } from '@smithy/core/config';
import { extendedEncodeURIComponent, HttpRequest } from '@smithy/core/protocols';
import { optionalEnv } from '../config/env.js';

let cached: { endpoint: string | undefined; client: S3Client } | undefined;

function s3(): S3Client {
  const endpoint = optionalEnv('AWS_ENDPOINT_URL_S3');
  if (!cached || cached.endpoint !== endpoint) {
    cached = {
      endpoint,
      client: new S3Client({
        maxAttempts: 4,
        // A presigned PUT must not carry a checksum of an empty body (curl -T sends the file).
        requestChecksumCalculation: 'WHEN_REQUIRED',
        responseChecksumValidation: 'WHEN_REQUIRED',
        ...(endpoint ? { endpoint, forcePathStyle: true } : {}),
      }),
    };
  }
  return cached.client;
}

/**
 * A small object written whole (an inline import file). Sent as a presigned PUT through `fetch`
 * rather than the S3 client, so imports-create does not bundle the client (see objectSize).
 */
export async function putObject(bucket: string, key: string, body: string, contentType: string): Promise<void> {
  const url = await presignedUrl('PUT', 'PutObject', bucket, key, SIGNED_REQUEST_SECONDS);
  await sendSigned('PutObject', () => fetch(url, { method: 'PUT', body, headers: { 'content-type': contentType } }));
}

let presignerCache: { endpoint: string | undefined; presigner: S3RequestPresigner; region: () => Promise<string> } | undefined;

/** The presigner with the credentials and region the S3 client would resolve (the default chain; Lambda: the environment). */
function presigner() {
  const endpoint = optionalEnv('AWS_ENDPOINT_URL_S3');
  if (!presignerCache || presignerCache.endpoint !== endpoint) {
    const region = loadConfig(NODE_REGION_CONFIG_OPTIONS, NODE_REGION_CONFIG_FILE_OPTIONS);
    presignerCache = { endpoint, region, presigner: new S3RequestPresigner({ credentials: defaultProvider(), region, sha256: Sha256 }) };
  }
  return presignerCache;
}

/**
 * A presigned URL of `method` on the object, as `getSignedUrl` of the S3 client configured in s3()
 * gives it: path-style on `AWS_ENDPOINT_URL_S3`, otherwise the bucket's virtual-hosted regional
 * endpoint (`https://<bucket>.s3.<region>.<partition's DNS suffix>/<key>`; path-style for a bucket
 * name that is not a DNS label), with the operation's `x-id` query parameter.
 */
async function presignedUrl(method: 'GET' | 'PUT' | 'HEAD', operation: string, bucket: string, key: string, expiresIn: number): Promise<string> {
  const { endpoint, region: regionOf, presigner: signer } = presigner();
  const region = await regionOf();
  const path = key.split('/').map(extendedEncodeURIComponent).join('/');
  const base = new URL(endpoint ?? `https://s3.${region}.${partition(region).dnsSuffix}`);
  const virtual = !endpoint && isVirtualHostableS3Bucket(bucket);
  const hostname = virtual ? `${bucket}.${base.hostname}` : base.hostname;
  const request = new HttpRequest({
    method,
    protocol: base.protocol,
    hostname,
    ...(base.port ? { port: Number(base.port) } : {}),
    path: `${base.pathname.replace(/\/$/, '')}${virtual ? '' : `/${bucket}`}/${path}`,
    query: { 'x-id': operation },
    headers: { host: base.port ? `${hostname}:${base.port}` : hostname },
  });
  return formatUrl(await signer.presign(request, { expiresIn }));
}

/** A presigned HTTP PUT URL (no signed headers but the host: `curl -T file "<url>"` works). */
export function presignedPutUrl(bucket: string, key: string, expiresIn: number): Promise<string> {
  return presignedUrl('PUT', 'PutObject', bucket, key, expiresIn);
}

/**
 * The object's size in bytes, or undefined when there is none: a presigned HEAD through `fetch`.
 * The API's import operations (imports-create writes an inline file, imports-start checks the
 * uploaded one) need only these two calls, and the S3 client with its XML protocol is ~200 KB of
 * their bundle; the workers (reading, multipart writing) keep the client.
 */
export async function objectSize(bucket: string, key: string): Promise<number | undefined> {
  const url = await presignedUrl('HEAD', 'HeadObject', bucket, key, SIGNED_REQUEST_SECONDS);
  const res = await sendSigned('HeadObject', () => fetch(url, { method: 'HEAD' }), [404]);
  if (res.status === 404) return undefined;
  return Number(res.headers.get('content-length') ?? 0);
}

/** How long the URL of a request sent at once is valid. */
const SIGNED_REQUEST_SECONDS = 300;
const MAX_ATTEMPTS = 4;

/**
 * Sends a presigned request with the S3 client's standard retry rule: up to 4 attempts on a
 * network error, 429 or 5xx, after a random delay under 100 ms × 2^attempt (full jitter). Any
 * other answer but 2xx or an `expected` status fails with the status and S3's error code.
 */
async function sendSigned(operation: string, send: () => Promise<Response>, expected: readonly number[] = []): Promise<Response> {
  for (let attempt = 1; ; attempt++) {
    let res: Response | undefined;
    try {
      res = await send();
    } catch (error) {
      if (attempt >= MAX_ATTEMPTS) throw error;
    }
    if (res && (res.ok || expected.includes(res.status))) return res;
    if (res && !(res.status === 429 || res.status >= 500)) throw new Error(`S3 ${operation}: HTTP ${res.status} ${s3ErrorCode(await res.text())}`.trim());
    if (res && attempt >= MAX_ATTEMPTS) throw new Error(`S3 ${operation}: HTTP ${res.status} after ${attempt} attempts`);
    await res?.body?.cancel();
    await new Promise((r) => setTimeout(r, Math.random() * 100 * 2 ** attempt));
  }
}

/** S3's error code from its XML error body (`<Code>NoSuchBucket</Code>`), for the message. */
const s3ErrorCode = (xml: string): string => /<Code>([^<]{1,100})<\/Code>/.exec(xml)?.[1] ?? '';

/** Deletes an object (an erasure's export or import file, contract §18); deleting a missing one is no error. */
export async function deleteObject(bucket: string, key: string): Promise<void> {
  await s3().send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
}

/** The object as a stream of bytes (never read whole). */
export async function openObject(bucket: string, key: string): Promise<Readable> {
  const out = await s3().send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  return out.Body as Readable;
}

/** The object's bytes, or `too_large` (nothing read past the size check) when it exceeds `maxBytes`. */
export async function readObject(bucket: string, key: string, maxBytes: number): Promise<Buffer | 'too_large'> {
  const out = await s3().send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  if ((out.ContentLength ?? 0) > maxBytes) {
    (out.Body as { destroy?: () => void } | undefined)?.destroy?.();
    return 'too_large';
  }
  const bytes = await out.Body?.transformToByteArray();
  return Buffer.from(bytes ?? new Uint8Array());
}

/** A presigned HTTP GET URL (no signed headers but the host: `curl "<url>"` or `fetch(url)` works). */
export function presignedGetUrl(bucket: string, key: string, expiresIn: number): Promise<string> {
  return presignedUrl('GET', 'GetObject', bucket, key, expiresIn);
}

// --- multipart uploads (exports: a file written in parts, never whole in memory) -----------------

/** S3's smallest part (every part but the last). */
export const MIN_PART_BYTES = 5 * 1024 * 1024;

export interface UploadedPart {
  PartNumber: number;
  ETag: string;
}

/** Starts a multipart upload; returns its upload id. Nothing is visible under `key` until it completes. */
export async function startMultipartUpload(bucket: string, key: string, contentType: string): Promise<string> {
  const out = await s3().send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: key, ContentType: contentType }));
  if (!out.UploadId) throw new Error('CreateMultipartUpload returned no upload id');
  return out.UploadId;
}

/** Uploads one part (1-based `partNumber`; at least MIN_PART_BYTES unless it is the last). */
export async function uploadPart(bucket: string, key: string, uploadId: string, partNumber: number, body: Buffer): Promise<UploadedPart> {
  const out = await s3().send(new UploadPartCommand({ Bucket: bucket, Key: key, UploadId: uploadId, PartNumber: partNumber, Body: body, ContentLength: body.length }));
  if (!out.ETag) throw new Error(`UploadPart ${partNumber} returned no ETag`);
  return { PartNumber: partNumber, ETag: out.ETag };
}

/** Completes the upload: the object appears under `key`, whole, at once. */
export async function completeMultipartUpload(bucket: string, key: string, uploadId: string, parts: UploadedPart[]): Promise<void> {
  await s3().send(new CompleteMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId: uploadId, MultipartUpload: { Parts: parts } }));
}

/** Aborts an upload (its parts are dropped); an upload that is already gone is fine. */
export async function abortMultipartUpload(bucket: string, key: string, uploadId: string): Promise<void> {
  try {
    await s3().send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId: uploadId }));
  } catch (error) {
    const e = error as { name?: string; $metadata?: { httpStatusCode?: number } };
    if (e.name === 'NoSuchUpload' || e.$metadata?.httpStatusCode === 404) return;
    throw error;
  }
}
