/**
 * Exports (contract §16): the operations' bodies and the export record as valibot schemas (they
 * also generate the OpenAPI document), and the parse functions. `filters` is checked by the very
 * schema the object's `-list` takes (shared/schemas/entities/define.ts `listSchema`), without
 * `cursor` and `limit`: the same rules, reported as `exports.invalid_request` with paths under
 * `filters.`.
 */
import * as v from 'valibot';
import { ApiError, invalidRequest } from '../errors.js';
import { cursorString, limitInteger, parseWith, rejectUnknownFields } from './common.js';
import { activityEntity, companyEntity, contactEntity, type EntityDefinition, listParseSchema, projectEntity } from './entities/index.js';

export const EXPORT_OBJECT_TYPES = ['contacts', 'companies', 'projects', 'activities'] as const;
export type ExportObjectType = (typeof EXPORT_OBJECT_TYPES)[number];
export const EXPORT_STATUSES = ['queued', 'processing', 'completed', 'failed', 'expired'] as const;

/** How long a `download_url` is valid after the `exports-get` (or `exports-list`) that returned it. */
export const DOWNLOAD_URL_TTL_SECONDS = 15 * 60;

/** The entity definition of each object type. */
export const EXPORT_ENTITIES: Record<ExportObjectType, EntityDefinition> = {
  contacts: contactEntity as EntityDefinition,
  companies: companyEntity as EntityDefinition,
  projects: projectEntity as EntityDefinition,
  activities: activityEntity as EntityDefinition,
};

const uuid = v.pipe(v.string(), v.uuid('must be a UUID'));
const timestamp = (description: string) => v.pipe(v.string(), v.isoTimestamp(), v.metadata({ description, examples: ['2026-11-22T01:16:30.123Z'] }));
const nullableTimestamp = (description: string) => v.pipe(v.nullable(v.pipe(v.string(), v.isoTimestamp())), v.metadata({ description }));

/** The `-list` body of an object type without `cursor` and `limit`. */
export function filtersSchema(objectType: ExportObjectType) {
  const { cursor: _c, limit: _l, ...entries } = listParseSchema(EXPORT_ENTITIES[objectType]).entries as v.ObjectEntries;
  return v.strictObject(entries);
}

// --- inputs -----------------------------------------------------------------------------------

const filtersDoc = v.pipe(
  v.record(v.string(), v.unknown()),
  v.metadata({
    description: "The same body the object's `-list` takes, without `cursor` and `limit` (contacts: search, tags, company_id, company_ids, source_ids; companies: search, tags; projects: search, status, company_id, contact_id, tags; activities: types, contact_id, company_id, project_id, completed), and `filter` and `sort` (contract §17)",
    examples: [{ tags: ['vip'] }],
  }),
);

export const exportCreateInput = v.strictObject({
  object_type: v.pipe(v.picklist(EXPORT_OBJECT_TYPES, 'must be contacts, companies, projects or activities'), v.metadata({ description: 'What to export', examples: ['contacts'] })),
  filters: v.optional(filtersDoc),
});
export type ExportCreateInput = { object_type: ExportObjectType; filters: Record<string, unknown> };

export const exportIdInput = v.strictObject({ id: uuid });
export const exportListInput = v.strictObject({ cursor: v.optional(cursorString), limit: v.optional(limitInteger, 25) });
export type ExportListInput = v.InferOutput<typeof exportListInput>;

// --- outputs ----------------------------------------------------------------------------------

export const exportSchema = v.object({
  id: v.pipe(uuid, v.metadata({ description: 'Export id' })),
  account_id: v.pipe(uuid, v.metadata({ description: 'Account the export belongs to' })),
  created_by: v.pipe(uuid, v.metadata({ description: 'User who created it' })),
  object_type: v.picklist(EXPORT_OBJECT_TYPES),
  filters: v.pipe(v.record(v.string(), v.unknown()), v.metadata({ description: 'The list filters, as given' })),
  status: v.pipe(v.picklist(EXPORT_STATUSES), v.metadata({ description: 'queued → processing → completed | failed; expired: an erasure (contract §18) deleted the file of a contacts export' })),
  total_rows: v.pipe(v.nullable(v.pipe(v.number(), v.integer())), v.metadata({ description: 'Rows of the file (null until completed)' })),
  processed_rows: v.pipe(v.number(), v.integer(), v.minValue(0), v.metadata({ description: 'Rows written so far' })),
  download_url: v.pipe(v.nullable(v.string()), v.metadata({ description: 'Once completed: a presigned HTTP GET of the CSV file (UTF-8 with BOM), valid 15 minutes from this answer; else null' })),
  expires_at: nullableTimestamp('When download_url stops working (null without one)'),
  failure_reason: v.pipe(v.string(), v.metadata({ description: '"" unless status is failed' })),
  created_at: timestamp('Creation timestamp (ISO 8601 UTC)'),
  updated_at: timestamp('Last change (ISO 8601 UTC)'),
});
export type ExportRecord = v.InferOutput<typeof exportSchema>;

export const exportListResult = v.object({ items: v.array(exportSchema), next_cursor: v.string() });

// --- parse functions --------------------------------------------------------------------------

/** `filters` by the object's list rules; an error names its path under `filters.`. */
function parseFilters(objectType: ExportObjectType, filters: unknown): Record<string, unknown> {
  if (filters === undefined) return {};
  if (filters === null || typeof filters !== 'object' || Array.isArray(filters)) {
    throw invalidRequest('exports', 'filters must be an object', [{ path: 'filters', message: 'must be an object' }]);
  }
  try {
    return parseWith('exports', filtersSchema(objectType), filters) as Record<string, unknown>;
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    const details = (error.details ?? []).map((d) => ({ path: d.path ? `filters.${d.path}` : 'filters', message: d.message }));
    throw new ApiError(error.code, `filters: ${error.message}`, details);
  }
}

export function parseExportCreate(body: Record<string, unknown>): ExportCreateInput {
  rejectUnknownFields('exports', body, { allowed: Object.keys(exportCreateInput.entries) });
  const { object_type } = parseWith('exports', v.object({ object_type: exportCreateInput.entries.object_type }), body);
  return { object_type, filters: parseFilters(object_type, body.filters) };
}

