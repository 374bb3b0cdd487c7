/** CSV exports (contract §16): the family's operations, declared once (see ../resource.ts). */
import { exportCreateInput, exportIdInput, exportListInput, exportListResult, exportSchema, parseExportCreate } from '../exports.js';
import { BY_ID, defineResource } from '../resource.js';
import { EXPORT_KEYS } from '../keys/exports.js';

export const exportsResource = defineResource({
  family: 'exports',
  prefix: 'exports',
  keys: EXPORT_KEYS,
  components: {
    Export: exportSchema,
    ExportList: exportListResult,
    ExportCreateInput: exportCreateInput,
    ExportIdInput: exportIdInput,
    ExportListInput: exportListInput,
  },
  operations: {
    create: {
      access: 'write',
      idempotent: true,
      bindings: { exportsQueue: 'send' },
      summary: 'Export a list (contacts, companies, projects or activities, with its filters) as a CSV file',
      description:
        "Starts a job (status `queued`); poll `exports-get` until `completed`, then GET `download_url` (presigned, valid 15 minutes from that answer). `filters` is the object's `-list` body without `cursor`/`limit`, checked by the same rules (`exports.invalid_request`, paths under `filters.`; `filter` and `sort` of contract §17: `exports.invalid_filter` with paths under `filters.filter`, `exports.invalid_sort`). " +
        "The file: UTF-8 with a BOM, RFC 4180 quoting, CRLF, a header row with the import's headers: every create field, `tags` joined with `;`, a contact's `company_domain`, `custom:<definition name>` per custom-field definition of the type, then `id`, `created_at`, `updated_at`. " +
        "A cell that begins with `=`, `+`, `-`, `@`, a tab or a carriage return is written with a leading `'` (the import strips it), so a contacts or companies file re-imports unchanged.",
      input: exportCreateInput,
      result: exportSchema,
      errors: ['exports.invalid_filter', 'exports.invalid_sort'],
      parse: parseExportCreate,
    },
    get: {
      access: 'read',
      bindings: { exportsBucket: 'read' },
      summary: 'Get an export: status, progress (processed_rows), and once completed a fresh download_url valid 15 minutes',
      input: exportIdInput,
      result: exportSchema,
      body: BY_ID,
    },
    list: {
      access: 'read',
      bindings: { exportsBucket: 'read' },
      summary: 'List exports, newest first (cursor pagination); completed ones carry a fresh download_url',
      input: exportListInput,
      result: exportListResult,
    },
  },
});
