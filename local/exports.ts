import { handler as exportHandler } from '../functions/exports/worker.js';
import { EXPORT_LEASE_MS } from '../shared/exports/worker.js';
import { type LocalJobQueue, startLocalJobQueue } from './job-queue.js';
import { type QueueWorker, startQueueWorker } from './queue-worker.js';

export type LocalExports = LocalJobQueue;

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

/**
 * Exports in local mode (contract §16), on the in-process fauxqs that serves the other queues and
 * S3 (multipart uploads included): the export queue and its worker; the files go to the imports
 * bucket under `exports/`. Sets EXPORTS_BUCKET, EXPORTS_QUEUE_URL and AWS_ENDPOINT_URL_S3, so
 * presigned download URLs point at http://127.0.0.1:<port>/<bucket>/exports/….
 */
export async function startLocalExports(endpoint: string, opts: LocalExportsOptions = {}): Promise<LocalExports> {
  return startLocalJobQueue(endpoint, {
    bucket: opts.bucket ?? 'crm-imports',
    queueName: opts.queueName ?? 'crm-exports',
    env: (bucket, queueUrl) => ({ EXPORTS_BUCKET: bucket, EXPORTS_QUEUE_URL: queueUrl }),
    startWorker: opts.worker !== false && ((queueUrl) => startExportWorker(endpoint, queueUrl, opts)),
  });
}
