/**
 * The steps and handlers of the record families' CRUD operations (records.ts builds them from
 * their declarations): `export const handler = getHandler(contactEntity);`. A create is declared
 * idempotent: its handler is `createHandler` of idempotent-records.ts (over `createStep` here).
 * Each calls its one domain function (shared/domain/records/), so a handler's bundle carries that
 * operation's rules and not the whole service (a get does not bundle merge).
 */
import { create, get } from '../domain/records/create.js';
import { remove } from '../domain/records/delete.js';
import { familyOf } from '../domain/records/family.js';
import { list } from '../domain/records/list.js';
import { update } from '../domain/records/update.js';
import { parseWith } from '../schemas/common.js';
import { listParseSchema } from '../schemas/entities/index.js';
import { type ParsedBody, parseRecordBody } from '../schemas/record-body.js';
import { byId, recordHandler, type RecordStep } from './records.js';

/** `<family>-create` and `-update`: a record body, checked for the mode, to its domain call. */
const withBody = (mode: 'create' | 'update', call: typeof create | typeof update): RecordStep<ParsedBody> => ({
  parse: (entity, body) => parseRecordBody(entity, body, mode),
  run: (entity, ctx, input) => call(familyOf(entity), ctx, input),
});

/** The step of `<family>-create` (its handler: idempotent-records.ts `createHandler`). */
export const createStep = /* @__PURE__ */ withBody('create', create);

export const getHandler = /* @__PURE__ */ recordHandler('get', /* @__PURE__ */ byId(get));
export const updateHandler = /* @__PURE__ */ recordHandler('update', /* @__PURE__ */ withBody('update', update));
export const deleteHandler = /* @__PURE__ */ recordHandler('delete', /* @__PURE__ */ byId(remove));
export const listHandler = /* @__PURE__ */ recordHandler('list', {
  parse: (entity, body) => parseWith(entity.family, listParseSchema(entity), body) as Record<string, unknown>,
  run: (entity, ctx, input) => list(familyOf(entity), ctx, input),
});
