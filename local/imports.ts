import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { CreateQueueCommand, SQSClient } from '@aws-sdk/client-sqs';
import { handler as importHandler } from '../functions/imports/worker.js';
import { IMPORT_LEASE_MS } from '../shared/imports/worker.js';
import { type QueueWorker, startQueueWorker } from './queue-worker.js';

export interface LocalImports {
  bucket: string;
  queueUrl: string;
  /** The import worker on the local queue (drain() waits until it is idle). */
  worker: QueueWorker;
  stop(): Promise<void>;
}

const LOCAL_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' };

/**
 * Imports in local mode, on the in-process fauxqs that already serves the delivery queue (it
 * speaks S3 on the same port, addressed path-style): the imports bucket, the import queue and
 * its worker. Sets the variables the handlers read (IMPORTS_BUCKET, IMPORTS_QUEUE_URL,
 * AWS_ENDPOINT_URL_S3), so presigned upload URLs point at http://127.0.0.1:<port>/<bucket>/….
 */
export interface LocalImportsOptions {
  bucket?: string;
  queueName?: string;
  /** The worker's handler (tests pass one with injected crashes); default functions/imports/worker.ts. */
  handler?: Parameters<typeof startQueueWorker>[0]['handler'];
  /** Seconds a failed message waits before it comes back (default: the job's lease, 120). */
  visibilityTimeoutSeconds?: number;
  onError?: (e: unknown) => void;
  /** false: only the bucket, the queue and the environment; the worker runs elsewhere (local/workers-thread.ts). */
  worker?: boolean;
}

/** The import worker on the local queue: a job at a time per slot, its message kept invisible while it runs. */
export function startImportWorker(endpoint: string, queueUrl: string, opts: Pick<LocalImportsOptions, 'handler' | 'visibilityTimeoutSeconds' | 'onError'> = {}): QueueWorker {
  // A job runs until it ends (no Lambda time limit here); its message stays invisible meanwhile
  // (extended while the worker runs). A message that failed, or whose job another worker's
  // lease holds, comes back once that lease would have run out.
  const visibilityTimeoutSeconds = opts.visibilityTimeoutSeconds ?? IMPORT_LEASE_MS / 1000;
  return startQueueWorker({ endpoint, queueUrl, handler: opts.handler ?? importHandler, concurrency: 4, visibilityTimeoutSeconds, extendWhileHandling: true, onError: opts.onError });
}

export async function startLocalImports(endpoint: string, opts: LocalImportsOptions = {}): Promise<LocalImports> {
  const bucket = opts.bucket ?? 'crm-imports';
  const s3 = new S3Client({ endpoint, forcePathStyle: true, region: 'us-east-1', credentials: LOCAL_CREDENTIALS });
  const sqs = new SQSClient({ endpoint, region: 'us-east-1', credentials: LOCAL_CREDENTIALS });
  try {
    await s3.send(new CreateBucketCommand({ Bucket: bucket }));
    const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: opts.queueName ?? 'crm-imports' }));
    if (!QueueUrl) throw new Error('local import queue: no queue URL');
    Object.assign(process.env, { IMPORTS_BUCKET: bucket, IMPORTS_QUEUE_URL: QueueUrl, AWS_ENDPOINT_URL_S3: endpoint, AWS_ENDPOINT_URL_SQS: endpoint });
    if (opts.worker === false) {
      const idle: QueueWorker = { stop: async () => undefined, drain: async () => undefined };
      return { bucket, queueUrl: QueueUrl, worker: idle, stop: async () => undefined };
    }
    const worker = startImportWorker(endpoint, QueueUrl, opts);
    return { bucket, queueUrl: QueueUrl, worker, stop: () => worker.stop() };
  } finally {
    s3.destroy();
    sqs.destroy();
  }
}
