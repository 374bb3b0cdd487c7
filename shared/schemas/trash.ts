/**
 * Trash, restore and merge (contract §15): the bodies of `<family>-restore`, `<family>-merge` and
 * `trash-list`, and the trash page, as valibot schemas (the OpenAPI document and the typed client
 * derive from them: shared/schemas/resources/trash.ts).
 */
import * as v from 'valibot';
import type { Family } from '../errors.js';
import { cursorString, limitInteger, rejectUnknownFields, requireId } from './common.js';
import { type EntityDefinition, recordSchema, TRASH_ENTITIES } from './entities/index.js';

const uuid = (description: string) => v.pipe(v.string(), v.uuid('must be a UUID'), v.metadata({ description, examples: ['4f1c1b4e-8a8e-4c55-9a43-3b0f5d6a7e21'] }));
const datetime = (description: string) => v.pipe(v.string(), v.isoTimestamp(), v.metadata({ description, examples: ['2026-11-22T01:16:30.123Z'] }));

/** Families whose deletions go to the trash (the `family` of trash-list). */
export const TRASH_FAMILIES = TRASH_ENTITIES.map((e) => e.family) as [(typeof TRASH_ENTITIES)[number]['family'], ...(typeof TRASH_ENTITIES)[number]['family'][]];

export const mergeInput = v.strictObject({
  primary_id: uuid('The record that stays: it keeps its non-empty fields and takes the secondary\'s where its own are empty'),
  secondary_id: uuid('The duplicate: its links move to the primary, then it goes to the trash (restorable)'),
});

/** `primary_id` and `secondary_id`: missing is invalid_request, not a UUID invalid_id, the same twice invalid_request. */
export function parseMerge(family: Family, body: Record<string, unknown>): { primary_id: string; secondary_id: string } {
  rejectUnknownFields(family, body, { allowed: ['primary_id', 'secondary_id'] });
  const primary = requireId(family, body, 'primary_id');
  const secondary = requireId(family, body, 'secondary_id');
  return { primary_id: primary, secondary_id: secondary };
}

export const trashListInput = v.strictObject({
  family: v.optional(v.pipe(v.picklist(TRASH_FAMILIES, `must be one of ${TRASH_FAMILIES.join(', ')}`), v.metadata({ description: 'Only trashed records of this family' }))),
  cursor: v.optional(v.pipe(cursorString, v.metadata({ description: 'The `next_cursor` of the previous page (opaque)' }))),
  limit: v.optional(v.pipe(limitInteger, v.metadata({ description: 'Items per page, 1–100 (default 25)', examples: [25] }))),
});
export type TrashListInput = v.InferOutput<typeof trashListInput>;

/** One trashed record: its family, the record as it was when deleted, when it was deleted and when it will be purged. */
export const trashItemSchemas = TRASH_ENTITIES.map((e) =>
  v.object({
    family: v.literal(e.family),
    record: recordSchema(e as EntityDefinition),
    deleted_at: datetime('When it was deleted'),
    purge_at: datetime('When it leaves the trash for good (`deleted_at` + TRASH_RETENTION_DAYS)'),
  }),
);
export const trashItemSchema = v.variant('family', trashItemSchemas as [(typeof trashItemSchemas)[number], ...(typeof trashItemSchemas)[number][]]);
export const trashPage = v.object({
  items: v.pipe(v.array(trashItemSchema), v.metadata({ description: 'Trashed records, most recently deleted first' })),
  next_cursor: v.pipe(v.string(), v.metadata({ description: 'Pass as `cursor` for the next page; "" on the last page' })),
});
export type TrashPage = v.InferOutput<typeof trashPage>;
