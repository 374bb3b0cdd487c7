import { type LocalJobQueue, type LocalJobQueueOptions, startLocalJobQueue } from './job-queue.js';
import { LOCAL_BUCKETS, LOCAL_QUEUES } from './resources.js';

export type LocalImports = LocalJobQueue;
export type LocalImportsOptions = LocalJobQueueOptions;

/**
 * Imports on an in-process fauxqs, for tests: the imports bucket, the import queue and the
 * topology's import worker on it. Sets IMPORTS_BUCKET, IMPORTS_QUEUE_URL and AWS_ENDPOINT_URL_S3,
 * so presigned upload URLs point at http://127.0.0.1:<port>/<bucket>/….
 */
export function startLocalImports(endpoint: string, opts: LocalImportsOptions = {}): Promise<LocalImports> {
  return startLocalJobQueue(endpoint, 'imports', { bucket: LOCAL_BUCKETS.imports, queueName: LOCAL_QUEUES.imports, env: { bucket: 'importsBucket', queue: 'importsQueue' } }, opts);
}
