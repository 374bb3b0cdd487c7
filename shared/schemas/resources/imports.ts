/** CSV imports (contract §10): the family's operations, declared once (see ../resource.ts). */
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
  ROW_ERROR_CODES,
} from '../imports.js';
import { BY_ID, defineResource } from '../resource.js';
import { IMPORT_KEYS } from '../keys/imports.js';

const BY_ID_ERRORS = ['imports.invalid_id', 'imports.not_found'] as const;
const JOB = { importsBucket: 'write', importsQueue: 'send' } as const;

export const importsResource = defineResource({
  family: 'imports',
  prefix: 'imports',
  keys: IMPORT_KEYS,
  components: {
    Import: importSchema,
    ImportCreateResult: importCreateResult,
    ImportRowError: importErrorSchema,
    ImportList: importListResult,
    ImportErrors: importErrorsResult,
    ImportCreateInput: importCreateInput,
    ImportIdInput: importIdInput,
    ImportListInput: importListInput,
    ImportErrorsInput: importErrorsInput,
  },
  operations: {
    create: {
      access: 'write',
      idempotent: true,
      bindings: JOB,
      summary: 'Import a CSV file of contacts or companies',
      description:
        'With `csv` (at most 200,000 characters) the job is queued at once. Without it the result carries `upload_url`: PUT the file there (e.g. `curl -T people.csv "<upload_url>"`, within 15 minutes, at most 50 MB and 100,000 rows), then call `imports-start`. ' +
        'The file: UTF-8 (a BOM is allowed), RFC 4180 quoting, a header row. Headers map to the create fields, compared without case, spaces, `-` and `_`; `tags` are separated by `;`; ' +
        "a contact's `company_domain` column links the company with that domain; `custom:<definition name>` fills that custom field; other headers are listed in `unmapped_columns`. " +
        "`upsert` (default) updates the contact with the same email (company: domain), without case, with the row's non-empty cells, else creates; `create` always creates. " +
        'A row that breaks a field rule is skipped and listed by `imports-errors`; a key seen earlier in the file is `duplicate_in_file` on the later row. Every created or updated record raises its usual webhook event.',
      input: importCreateInput,
      result: importCreateResult,
    },
    start: {
      access: 'write',
      bindings: JOB,
      summary: 'Start an import whose file was uploaded to its upload_url',
      description: '`imports.invalid_request` when nothing was uploaded (or the file is larger than 50 MB); `imports.conflict` when the import is not awaiting its upload.',
      input: importIdInput,
      result: importSchema,
      errors: [...BY_ID_ERRORS, 'imports.conflict'],
      body: BY_ID,
    },
    get: { access: 'read', summary: 'Get an import: status and progress (processed_rows of total_rows, counters)', input: importIdInput, result: importSchema, body: BY_ID },
    list: { access: 'read', summary: 'List imports, newest first (cursor pagination)', input: importListInput, result: importListResult },
    cancel: {
      access: 'write',
      summary: 'Cancel an import: no further rows are applied; rows already applied stay',
      description: 'Canceling a canceled import returns it unchanged; a completed or failed import is `imports.conflict`.',
      input: importIdInput,
      result: importSchema,
      errors: [...BY_ID_ERRORS, 'imports.conflict'],
      body: BY_ID,
    },
    errors: {
      access: 'read',
      summary: 'Row errors of an import, in row order (cursor pagination)',
      description: `\`row_number\` as a spreadsheet shows it (the header is row 1); \`code\` one of ${ROW_ERROR_CODES.join(', ')} (email_suppressed: an address an erasure suppressed, in the email column, its \`value\` left empty).`,
      input: importErrorsInput,
      result: importErrorsResult,
      errors: BY_ID_ERRORS,
      body: { ids: ['import_id'] },
    },
  },
});
