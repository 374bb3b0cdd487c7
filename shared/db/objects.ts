/**
 * Object storage (S3): the import and export files and the raw inbound messages. One client for all.
 * `AWS_ENDPOINT_URL_S3` (the SDK's own variable) may point at a local S3 API (fauxqs in local
 * mode), addressed path-style (`http://127.0.0.1:<port>/<bucket>/<key>`).
 */
import type { Readable } from 'node:stream';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  GetObjectCommand,
  HeadObjectCommand,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
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

export async function putObject(bucket: string, key: string, body: string, contentType: string): Promise<void> {
  await s3().send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body, ContentType: contentType, ContentLength: Buffer.byteLength(body) }));
}

/** A presigned HTTP PUT URL (no signed headers but the host: `curl -T file "<url>"` works). */
export function presignedPutUrl(bucket: string, key: string, expiresIn: number): Promise<string> {
  return getSignedUrl(s3(), new PutObjectCommand({ Bucket: bucket, Key: key }), { expiresIn });
}

/** The object's size in bytes, or undefined when there is none. */
export async function objectSize(bucket: string, key: string): Promise<number | undefined> {
  try {
    const out = await s3().send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
    return out.ContentLength ?? 0;
  } catch (error) {
    const e = error as { name?: string; $metadata?: { httpStatusCode?: number } };
    if (e.name === 'NotFound' || e.name === 'NoSuchKey' || e.$metadata?.httpStatusCode === 404) return undefined;
    throw error;
  }
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
  return getSignedUrl(s3(), new GetObjectCommand({ Bucket: bucket, Key: key }), { expiresIn });
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
