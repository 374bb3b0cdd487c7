/**
 * The import files' bucket and the import queue: the only S3 and SQS calls of the imports.
 * Deployed, `IMPORTS_BUCKET` and `IMPORTS_QUEUE_URL` come from the stack (lib/imports.ts).
 * Locally, `AWS_ENDPOINT_URL_S3` / `AWS_ENDPOINT_URL_SQS` (the SDK's own variables) point at the
 * in-process fauxqs, addressed path-style (`http://127.0.0.1:<port>/<bucket>/<key>`).
 */
import type { Readable } from 'node:stream';
import { GetObjectCommand, HeadObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { optionalEnv, requireEnv } from '../config/env.js';

let s3Client: { endpoint: string | undefined; client: S3Client } | undefined;
let sqsClient: { endpoint: string | undefined; client: SQSClient } | undefined;

export function s3(): S3Client {
  const endpoint = optionalEnv('AWS_ENDPOINT_URL_S3');
  if (s3Client?.endpoint !== endpoint || !s3Client) {
    s3Client = {
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
  return s3Client.client;
}

function sqs(): SQSClient {
  const endpoint = optionalEnv('AWS_ENDPOINT_URL_SQS');
  if (sqsClient?.endpoint !== endpoint || !sqsClient) {
    sqsClient = { endpoint, client: new SQSClient({ maxAttempts: 4, ...(endpoint ? { endpoint, useQueueUrlAsEndpoint: false } : {}) }) };
  }
  return sqsClient.client;
}

export const importsBucket = () => requireEnv('IMPORTS_BUCKET');
export const importsQueueUrl = () => requireEnv('IMPORTS_QUEUE_URL');

/** Object key of an import's file: by account and import id (never the client's file name). */
export const objectKeyOf = (accountId: string, importId: string) => `imports/${accountId}/${importId}.csv`;

export async function putFile(key: string, body: string): Promise<void> {
  await s3().send(new PutObjectCommand({ Bucket: importsBucket(), Key: key, Body: body, ContentType: 'text/csv; charset=utf-8' }));
}

/** A presigned HTTP PUT URL for the file (no signed headers but the host: `curl -T file.csv "<url>"` works). */
export function uploadUrl(key: string, expiresIn: number): Promise<string> {
  return getSignedUrl(s3(), new PutObjectCommand({ Bucket: importsBucket(), Key: key }), { expiresIn });
}

/** The file's size in bytes, or undefined when nothing was uploaded. */
export async function fileSize(key: string): Promise<number | undefined> {
  try {
    const out = await s3().send(new HeadObjectCommand({ Bucket: importsBucket(), Key: key }));
    return out.ContentLength ?? 0;
  } catch (error) {
    const e = error as { name?: string; $metadata?: { httpStatusCode?: number } };
    if (e.name === 'NotFound' || e.name === 'NoSuchKey' || e.$metadata?.httpStatusCode === 404) return undefined;
    throw error;
  }
}

/** The file as a stream of bytes (never read whole). */
export async function openFile(key: string): Promise<Readable> {
  const out = await s3().send(new GetObjectCommand({ Bucket: importsBucket(), Key: key }));
  return out.Body as Readable;
}

/** The import queue's message: which job to work on. */
export interface ImportMessage {
  account_id: string;
  import_id: string;
}

export function parseImportMessage(body: string): ImportMessage | undefined {
  try {
    const m = JSON.parse(body) as Record<string, unknown>;
    if (typeof m.account_id === 'string' && typeof m.import_id === 'string') return { account_id: m.account_id, import_id: m.import_id };
  } catch {
    // not JSON
  }
  return undefined;
}

export async function enqueueImport(message: ImportMessage): Promise<void> {
  await sqs().send(new SendMessageCommand({ QueueUrl: importsQueueUrl(), MessageBody: JSON.stringify(message) }));
}
