import { type LocalJobQueue, type LocalJobQueueOptions, startLocalJobQueue } from './job-queue.js';
import { LOCAL_BUCKETS, LOCAL_QUEUES } from './resources.js';

export type LocalExports = LocalJobQueue;
export type LocalExportsOptions = LocalJobQueueOptions;

/**
 * Exports (contract §16) on an in-process fauxqs, for tests: the export queue and the topology's
 * export worker on it; the files go to the imports bucket under `exports/`. Sets EXPORTS_BUCKET,
 * EXPORTS_QUEUE_URL and AWS_ENDPOINT_URL_S3, so presigned download URLs point at
 * http://127.0.0.1:<port>/<bucket>/exports/….
 */
export function startLocalExports(endpoint: string, opts: LocalExportsOptions = {}): Promise<LocalExports> {
  return startLocalJobQueue(endpoint, 'exports', { bucket: LOCAL_BUCKETS.imports, queueName: LOCAL_QUEUES.exports, env: { bucket: 'exportsBucket', queue: 'exportsQueue' } }, opts);
}
