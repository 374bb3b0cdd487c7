/**
 * Imports (contract §10): the operations' bodies, the import record and a row error, as
 * valibot schemas (they also generate the OpenAPI document), and the parse functions that run
 * the contract's checks in its order.
 */
import * as v from 'valibot';
import { cursorString, limitInteger } from './common.js';

export const IMPORT_OBJECT_TYPES = ['contacts', 'companies', 'projects'] as const;
export const IMPORT_MODES = ['upsert', 'create'] as const;
export const IMPORT_STATUSES = ['awaiting_upload', 'queued', 'processing', 'completed', 'failed', 'canceled'] as const;
export const ROW_ERROR_CODES = ['invalid_value', 'missing_required', 'duplicate_in_file', 'invalid_company', 'invalid_custom_fields', 'wrong_column_count', 'email_suppressed'] as const;
export type RowErrorCode = (typeof ROW_ERROR_CODES)[number];

/** Limits of contract §10. */
export const MAX_INLINE_CSV_CHARS = 200_000;
export const MAX_FILE_BYTES = 50 * 1024 * 1024;
export const MAX_ROWS = 100_000;
export const UPLOAD_URL_TTL_SECONDS = 15 * 60;

const uuid = v.pipe(v.string(), v.uuid('must be a UUID'));
const timestamp = (description: string) => v.pipe(v.string(), v.isoTimestamp(), v.metadata({ description, examples: ['2026-11-22T01:16:30.123Z'] }));
const nullableTimestamp = (description: string) => v.pipe(v.nullable(v.pipe(v.string(), v.isoTimestamp())), v.metadata({ description }));
const count = (description: string) => v.pipe(v.number(), v.integer(), v.minValue(0), v.metadata({ description }));

// --- inputs -----------------------------------------------------------------------------------

export const importCreateInput = v.strictObject({
  object_type: v.pipe(v.picklist(IMPORT_OBJECT_TYPES, 'must be contacts, companies or projects'), v.metadata({ description: 'What the rows are', examples: ['contacts'] })),
  mode: v.optional(
    v.pipe(v.picklist(IMPORT_MODES, 'must be upsert or create'), v.metadata({ description: 'upsert (default): match contacts by email and companies by domain, without case (projects have no key: every row creates); create: always create' })),
    'upsert',
  ),
  file_name: v.optional(v.pipe(v.string(), v.maxLength(255, 'must be at most 255 characters'), v.metadata({ description: 'Shown on the import record', examples: ['people.csv'] })), ''),
  csv: v.optional(
    v.pipe(
      v.string(),
      v.maxLength(MAX_INLINE_CSV_CHARS, `must be at most ${MAX_INLINE_CSV_CHARS} characters (upload larger files through upload_url)`),
      v.metadata({ description: 'The whole CSV file (at most 200,000 characters): the job starts at once. Without it the result carries upload_url.' }),
    ),
  ),
});
export type ImportCreateInput = v.InferOutput<typeof importCreateInput>;

export const importIdInput = v.strictObject({ id: uuid });
export const importListInput = v.strictObject({ cursor: v.optional(cursorString), limit: v.optional(limitInteger, 25) });
export type ImportListInput = v.InferOutput<typeof importListInput>;
export const importErrorsInput = v.strictObject({ import_id: uuid, cursor: v.optional(cursorString), limit: v.optional(limitInteger, 25) });
export type ImportErrorsInput = v.InferOutput<typeof importErrorsInput>;

// --- outputs ----------------------------------------------------------------------------------

export const importSchema = v.object({
  id: v.pipe(uuid, v.metadata({ description: 'Import id' })),
  account_id: v.pipe(uuid, v.metadata({ description: 'Account the import belongs to' })),
  created_by: v.pipe(uuid, v.metadata({ description: 'User who created it' })),
  object_type: v.picklist(IMPORT_OBJECT_TYPES),
  mode: v.picklist(IMPORT_MODES),
  file_name: v.string(),
  status: v.pipe(
    v.picklist(IMPORT_STATUSES),
    v.metadata({ description: 'awaiting_upload → queued → processing → completed | failed; canceled by imports-cancel' }),
  ),
  total_rows: v.pipe(v.nullable(v.pipe(v.number(), v.integer())), v.metadata({ description: 'Data rows of the file (null until counted)' })),
  processed_rows: count('Rows handled so far (applied or recorded as errors)'),
  created_count: count('Records created'),
  updated_count: count('Records updated (upsert matches)'),
  error_count: count('Rows skipped with an error (see imports-errors)'),
  failure_reason: v.pipe(v.string(), v.metadata({ description: '"" unless status is failed' })),
  unmapped_columns: v.pipe(v.array(v.string()), v.metadata({ description: 'Headers that map to no field (ignored)' })),
  started_at: nullableTimestamp('When a worker started the job'),
  completed_at: nullableTimestamp('When the job completed, failed or was canceled'),
  created_at: timestamp('Creation timestamp (ISO 8601 UTC)'),
  updated_at: timestamp('Last change (ISO 8601 UTC)'),
});
export type ImportRecord = v.InferOutput<typeof importSchema>;

export const importCreateResult = v.object({
  ...importSchema.entries,
  upload_url: v.optional(
    v.pipe(v.string(), v.metadata({ description: 'Only without csv: a presigned HTTP PUT URL for the file (valid 15 minutes; at most 50 MB and 100,000 rows); then call imports-start' })),
  ),
});

export const importErrorSchema = v.object({
  row_number: v.pipe(v.number(), v.integer(), v.metadata({ description: 'As a spreadsheet shows it: the header is row 1, the first data row 2' })),
  column: v.pipe(v.string(), v.metadata({ description: 'The header of the offending column ("" for the whole row)' })),
  code: v.picklist(ROW_ERROR_CODES),
  message: v.string(),
  value: v.pipe(v.string(), v.metadata({ description: 'The offending cell (at most 500 characters)' })),
  created_at: timestamp('When the error was recorded'),
});
export type ImportRowError = v.InferOutput<typeof importErrorSchema>;

export const importListResult = v.object({ items: v.array(importSchema), next_cursor: v.string() });
export const importErrorsResult = v.object({ items: v.array(importErrorSchema), next_cursor: v.string() });
