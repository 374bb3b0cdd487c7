import { handler as importHandler } from '../functions/imports/worker.js';
import { IMPORT_LEASE_MS } from '../shared/imports/worker.js';
import { type LocalJobQueue, startLocalJobQueue } from './job-queue.js';
import { type QueueWorker, startQueueWorker } from './queue-worker.js';

export type LocalImports = LocalJobQueue;

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
  return startLocalJobQueue(endpoint, {
    bucket: opts.bucket ?? 'crm-imports',
    queueName: opts.queueName ?? 'crm-imports',
    env: (bucket, queueUrl) => ({ IMPORTS_BUCKET: bucket, IMPORTS_QUEUE_URL: queueUrl }),
    startWorker: opts.worker !== false && ((queueUrl) => startImportWorker(endpoint, queueUrl, opts)),
  });
}
