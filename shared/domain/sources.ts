import { setOverrideItem } from '../db/meta.js';
import { createRecord, deleteRecord, type EntityModel, getRecord, updateRecord } from '../db/records.js';
import { notFound } from '../errors.js';
import type { OperationContext } from './context.js';
import { SOURCE_FIELDS, sourceWritable } from '../schemas/records.js';
import type { parseRecordBody } from '../schemas/record-body.js';
import { page } from './listing.js';
import { shape } from './shape.js';

export const sourceBody = {
  family: 'sources' as const,
  writable: sourceWritable,
  nameField: 'name' as const,
  nameCode: 'sources.name_required',
};

/** Lead sources are listed newest first and need no index entries. */
export const sourceModel: EntityModel = { type: 'source', indexNames: () => [] };

export type Source = Record<(typeof SOURCE_FIELDS)[number], unknown>;
export const sourceToApi = (item: Record<string, unknown>): Source => shape(SOURCE_FIELDS, {}, item);

type Body = ReturnType<typeof parseRecordBody<typeof sourceWritable>>;

export async function createSource(ctx: OperationContext, { fields }: Body): Promise<Source> {
  return sourceToApi(await createRecord(sourceModel, { accountId: ctx.accountId, userId: ctx.userId, fields: { name: fields.name } }));
}

export async function getSource(ctx: OperationContext, id: string): Promise<Source> {
  const record = await getRecord('source', ctx.accountId, id);
  if (!record) throw notFound('sources', 'source');
  return sourceToApi(record);
}

export async function updateSource(ctx: OperationContext, { id, fields }: Body): Promise<Source> {
  const record = await updateRecord(sourceModel, {
    accountId: ctx.accountId,
    id: id!,
    compute: () => ({ set: fields }),
    extra: (current, next) => (next.name !== current.name ? [setOverrideItem(ctx.accountId, 'source', id!, String(next.name), next.ver)] : []),
  });
  if (!record) throw notFound('sources', 'source');
  return sourceToApi(record);
}

export async function deleteSource(ctx: OperationContext, id: string): Promise<{ deleted: true }> {
  const old = await deleteRecord(sourceModel, ctx.accountId, id, (current) => [setOverrideItem(ctx.accountId, 'source', id, null, current.ver + 1)]);
  if (!old) throw notFound('sources', 'source');
  return { deleted: true };
}

export async function listSources(ctx: OperationContext, input: { cursor?: string; limit?: number }) {
  return page(ctx, { type: 'source', family: 'sources', cursor: input.cursor, limit: input.limit, filters: {}, drivers: [] }, sourceToApi);
}
