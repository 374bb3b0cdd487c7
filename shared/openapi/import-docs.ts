/**
 * The API description of the import operations (contract §10; see operations.ts for the shape
 * of an entry).
 */
import type * as v from 'valibot';
import {
  importCreateInput,
  importCreateResult,
  importErrorSchema,
  importErrorsInput,
  importErrorsResult,
  importIdInput,
  importListInput,
  importListResult,
  importSchema,
} from '../schemas/imports.js';
import type { OperationDoc } from './doc-types.js';

/** Named component schemas of the import operations. */
export const importComponentSchemas: Record<string, v.GenericSchema> = {
  Import: importSchema,
  ImportCreateResult: importCreateResult,
  ImportRowError: importErrorSchema,
  ImportList: importListResult,
  ImportErrors: importErrorsResult,
  ImportCreateInput: importCreateInput,
  ImportIdInput: importIdInput,
  ImportListInput: importListInput,
  ImportErrorsInput: importErrorsInput,
};

const BY_ID = ['imports.invalid_id', 'imports.not_found'] as const;

export const importOperationDocs = {
  'imports-create': {
    summary: 'Import a CSV file of contacts or companies',
    description:
      'With `csv` (at most 200,000 characters) the job is queued at once. Without it the result carries `upload_url`: PUT the file there (e.g. `curl -T people.csv "<upload_url>"`, within 15 minutes, at most 50 MB and 100,000 rows), then call `imports-start`. ' +
      'The file: UTF-8 (a BOM is allowed), RFC 4180 quoting, a header row. Headers map to the create fields, compared without case, spaces, `-` and `_`; `tags` are separated by `;`; ' +
      'a contact\'s `company_domain` column links the company with that domain; `custom:<definition name>` fills that custom field; other headers are listed in `unmapped_columns`. ' +
      '`upsert` (default) updates the contact with the same email (company: domain), without case, with the row\'s non-empty cells, else creates; `create` always creates. ' +
      'A row that breaks a field rule is skipped and listed by `imports-errors`; a key seen earlier in the file is `duplicate_in_file` on the later row. Every created or updated record raises its usual webhook event.',
    input: importCreateInput,
    result: importCreateResult,
  },
  'imports-start': {
    summary: 'Start an import whose file was uploaded to its upload_url',
    description: '`imports.invalid_request` when nothing was uploaded (or the file is larger than 50 MB); `imports.conflict` when the import is not awaiting its upload.',
    input: importIdInput,
    result: importSchema,
    errors: [...BY_ID, 'imports.conflict'],
  },
  'imports-get': { summary: 'Get an import: status and progress (processed_rows of total_rows, counters)', input: importIdInput, result: importSchema },
  'imports-list': { summary: 'List imports, newest first (cursor pagination)', input: importListInput, result: importListResult },
  'imports-cancel': {
    summary: 'Cancel an import: no further rows are applied; rows already applied stay',
    description: 'Canceling a canceled import returns it unchanged; a completed or failed import is `imports.conflict`.',
    input: importIdInput,
    result: importSchema,
    errors: [...BY_ID, 'imports.conflict'],
  },
  'imports-errors': {
    summary: 'Row errors of an import, in row order (cursor pagination)',
    description: '`row_number` as a spreadsheet shows it (the header is row 1); `code` one of invalid_value, missing_required, duplicate_in_file, invalid_company, invalid_custom_fields, wrong_column_count.',
    input: importErrorsInput,
    result: importErrorsResult,
    errors: BY_ID,
  },
} satisfies Record<string, OperationDoc>;
