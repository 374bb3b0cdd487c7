/**
 * The handlers of the trash operations (contract §15), built from their declarations like the
 * CRUD ones (records.ts): `export const handler = restoreHandler(contactEntity);`.
 */
import { familyOf } from '../domain/records/family.js';
import { merge } from '../domain/records/merge.js';
import { restore } from '../domain/records/restore.js';
import { parseMerge } from '../schemas/trash.js';
import { byId, recordHandler } from './records.js';

export const restoreHandler = /* @__PURE__ */ recordHandler('restore', /* @__PURE__ */ byId(restore));

export const mergeHandler = /* @__PURE__ */ recordHandler('merge', {
  parse: (entity, body) => parseMerge(entity.family, body),
  run: (entity, ctx, input) => merge(familyOf(entity), ctx, input.primary_id, input.secondary_id),
});
