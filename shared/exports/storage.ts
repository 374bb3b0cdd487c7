/**
 * The export files (the imports bucket's `exports/` prefix, through the data layer's object
 * store, shared/db/objects.ts) and the export queue. Deployed, `EXPORTS_BUCKET` and
 * `EXPORTS_QUEUE_URL` come from the stack (lib/job-queue.ts); locally from local/resources.ts.
 */
import { requireEnv } from '../config/env.js';
import { bindingEnv } from '../config/bindings.js';
import { abortMultipartUpload, completeMultipartUpload, presignedGetUrl, startMultipartUpload, type UploadedPart, uploadPart } from '../db/objects.js';
import { type JobMessage, jobMessages } from '../imports/storage.js';

export const exportsBucket = () => requireEnv(bindingEnv('exportsBucket'));
export const exportsQueueUrl = () => requireEnv(bindingEnv('exportsQueue'));

/** Object key of an export's file: by account and export id. */
export const exportKeyOf = (accountId: string, exportId: string) => `exports/${accountId}/${exportId}.csv`;

/** A presigned HTTP GET URL of the file. */
export const downloadUrl = (key: string, expiresIn: number) => presignedGetUrl(exportsBucket(), key, expiresIn);

export const CSV_CONTENT_TYPE = 'text/csv; charset=utf-8';

/** One attempt's file: a multipart upload, part by part; nothing is visible until `complete`. */
export const fileUpload = {
  start: (key: string) => startMultipartUpload(exportsBucket(), key, CSV_CONTENT_TYPE),
  part: (key: string, uploadId: string, n: number, body: Buffer) => uploadPart(exportsBucket(), key, uploadId, n, body),
  complete: (key: string, uploadId: string, parts: UploadedPart[]) => completeMultipartUpload(exportsBucket(), key, uploadId, parts),
  abort: (key: string, uploadId: string) => abortMultipartUpload(exportsBucket(), key, uploadId),
};

/** The export queue's message: which job to work on. */
export type ExportMessage = JobMessage<'export_id'>;
export const { parse: parseExportMessage, enqueue: enqueueExport, fairness: exportQueueFairness } = jobMessages('export_id', exportsQueueUrl);
