/**
 * The import files' bucket (through the data layer's object store, shared/db/objects.ts) and the
 * import queue: the only SQS calls of the imports.
 * Deployed, `IMPORTS_BUCKET` and `IMPORTS_QUEUE_URL` come from the stack (lib/imports.ts).
 * Locally, `AWS_ENDPOINT_URL_S3` / `AWS_ENDPOINT_URL_SQS` (the SDK's own variables) point at the
 * in-process fauxqs, addressed path-style (`http://127.0.0.1:<port>/<bucket>/<key>`).
 */
import type { Readable } from 'node:stream';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { CALL_TIME_LIMITS } from '../config/call-limits.js';
import { optionalEnv, requireEnv } from '../config/env.js';
import { bindingEnv } from '../config/bindings.js';
import { objectSize, openObject, presignedPutUrl, putObject } from '../db/objects.js';
import type { JobFairness } from '../http/job-handler.js';

let sqsClient: { endpoint: string | undefined; client: SQSClient } | undefined;

function sqs(): SQSClient {
  const endpoint = optionalEnv('AWS_ENDPOINT_URL_SQS');
  if (sqsClient?.endpoint !== endpoint || !sqsClient) {
    sqsClient = { endpoint, client: new SQSClient({ maxAttempts: 4, requestHandler: CALL_TIME_LIMITS, ...(endpoint ? { endpoint, useQueueUrlAsEndpoint: false } : {}) }) };
  }
  return sqsClient.client;
}

export const importsBucket = () => requireEnv(bindingEnv('importsBucket'));
export const importsQueueUrl = () => requireEnv(bindingEnv('importsQueue'));

/** Object key of an import's file: by account and import id (never the client's file name). */
export const objectKeyOf = (accountId: string, importId: string) => `imports/${accountId}/${importId}.csv`;

export const putFile = (key: string, body: string) => putObject(importsBucket(), key, body, 'text/csv; charset=utf-8');

/** A presigned HTTP PUT URL for the file (`curl -T file.csv "<url>"` works). */
export const uploadUrl = (key: string, expiresIn: number) => presignedPutUrl(importsBucket(), key, expiresIn);

/** The file's size in bytes, or undefined when nothing was uploaded. */
export const fileSize = (key: string) => objectSize(importsBucket(), key);

/** The file as a stream of bytes (never read whole). */
export const openFile = (key: string): Promise<Readable> => openObject(importsBucket(), key);

/** A job queue's message: which job of which account to work on (`id` names the job's id field). */
export type JobMessage<K extends string> = { account_id: string } & Record<K, string>;

/**
 * A job queue's messages (imports, exports, erasures, index builds): `parse` reads one strictly
 * (anything else is malformed and dropped by the worker), `enqueue` sends one to the queue.
 */
export function jobMessages<K extends string>(idField: K, queueUrl: () => string) {
  return {
    parse(body: string): JobMessage<K> | undefined {
      try {
        const m = JSON.parse(body) as Record<string, unknown> | null;
        const id = m?.[idField];
        if (typeof m?.account_id === 'string' && typeof id === 'string') return { account_id: m.account_id, [idField]: id } as JobMessage<K>;
      } catch {
        // not JSON
      }
      return undefined;
    },
    enqueue: (message: JobMessage<K>) => sendQueueMessage(queueUrl(), JSON.stringify(message)),
    /** The queue's per-account cap (shared/http/job-handler.ts): `queue` names its places, a job put back is sent again after a delay. */
    fairness: (queue: string, perAccount: number): JobFairness<JobMessage<K>> => ({
      queue,
      perAccount,
      of: (m) => ({ accountId: m.account_id, jobId: m[idField] }),
      defer: (m, delaySeconds) => sendQueueMessage(queueUrl(), JSON.stringify(m), delaySeconds),
      wake: (accountId, jobId) => sendQueueMessage(queueUrl(), JSON.stringify({ account_id: accountId, [idField]: jobId })),
    }),
  };
}

/** The import queue's message: which job to work on. */
export type ImportMessage = JobMessage<'import_id'>;
export const { parse: parseImportMessage, enqueue: enqueueImport, fairness: importQueueFairness } = jobMessages('import_id', importsQueueUrl);

export async function sendQueueMessage(queueUrl: string, body: string, delaySeconds?: number): Promise<void> {
  await sqs().send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: body, ...(delaySeconds ? { DelaySeconds: delaySeconds } : {}) }));
}
