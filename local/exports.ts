import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { CreateQueueCommand, SQSClient } from '@aws-sdk/client-sqs';
import { handler as exportHandler } from '../functions/exports/worker.js';
import { EXPORT_LEASE_MS } from '../shared/exports/worker.js';
import { type QueueWorker, startQueueWorker } from './queue-worker.js';

export interface LocalExports {
  bucket: string;
  queueUrl: string;
  /** The export worker on the local queue (drain() waits until it is idle). */
  worker: QueueWorker;
  stop(): Promise<void>;
}

export interface LocalExportsOptions {
  /** The bucket (default: the imports bucket, `crm-imports`; files under `exports/`). */
  bucket?: string;
  queueName?: string;
  /** The worker's handler (tests pass one with injected crashes); default functions/exports/worker.ts. */
  handler?: Parameters<typeof startQueueWorker>[0]['handler'];
  /** Seconds a failed message waits before it comes back (default: the job's lease, 120). */
  visibilityTimeoutSeconds?: number;
  onError?: (e: unknown) => void;
  /** false: only the queue and the environment; the worker runs elsewhere (local/workers-thread.ts). */
  worker?: boolean;
}

/** The export worker on the local queue: its message kept invisible while a job runs. */
export function startExportWorker(endpoint: string, queueUrl: string, opts: Pick<LocalExportsOptions, 'handler' | 'visibilityTimeoutSeconds' | 'onError'> = {}): QueueWorker {
  const visibilityTimeoutSeconds = opts.visibilityTimeoutSeconds ?? EXPORT_LEASE_MS / 1000;
  return startQueueWorker({ endpoint, queueUrl, handler: opts.handler ?? exportHandler, concurrency: 2, visibilityTimeoutSeconds, extendWhileHandling: true, onError: opts.onError });
}

const LOCAL_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' };

/**
 * Exports in local mode (contract §16), on the in-process fauxqs that serves the other queues and
 * S3 (multipart uploads included): the export queue and its worker; the files go to the imports
 * bucket under `exports/`. Sets EXPORTS_BUCKET, EXPORTS_QUEUE_URL and AWS_ENDPOINT_URL_S3, so
 * presigned download URLs point at http://127.0.0.1:<port>/<bucket>/exports/….
 */
export async function startLocalExports(endpoint: string, opts: LocalExportsOptions = {}): Promise<LocalExports> {
  const bucket = opts.bucket ?? 'crm-imports';
  const s3 = new S3Client({ endpoint, forcePathStyle: true, region: 'us-east-1', credentials: LOCAL_CREDENTIALS });
  const sqs = new SQSClient({ endpoint, region: 'us-east-1', credentials: LOCAL_CREDENTIALS });
  try {
    await s3.send(new CreateBucketCommand({ Bucket: bucket })).catch((error: { name?: string }) => {
      if (error.name !== 'BucketAlreadyOwnedByYou' && error.name !== 'BucketAlreadyExists') throw error;
    });
    const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: opts.queueName ?? 'crm-exports' }));
    if (!QueueUrl) throw new Error('local export queue: no queue URL');
    Object.assign(process.env, { EXPORTS_BUCKET: bucket, EXPORTS_QUEUE_URL: QueueUrl, AWS_ENDPOINT_URL_S3: endpoint, AWS_ENDPOINT_URL_SQS: endpoint });
    if (opts.worker === false) {
      const idle: QueueWorker = { stop: async () => undefined, drain: async () => undefined };
      return { bucket, queueUrl: QueueUrl, worker: idle, stop: async () => undefined };
    }
    const worker = startExportWorker(endpoint, QueueUrl, opts);
    return { bucket, queueUrl: QueueUrl, worker, stop: () => worker.stop() };
  } finally {
    s3.destroy();
    sqs.destroy();
  }
}
