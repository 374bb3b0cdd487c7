/**
 * Handlers of plain CRUD operations, derived from an entity definition: each handler file is
 * one line (`export const handler = getHandler(contactEntity)`). A create is declared idempotent:
 * its handler is `createHandler` of idempotent-records.ts (over `createOperation` here), which
 * applies the idempotency its declaration asks for, so that the other handlers' bundles do not
 * carry it.
 * Each calls its one domain function (shared/domain/records/), so a handler's bundle carries that
 * operation's rules and not the whole service (a get does not bundle merge).
 */
import { create, get } from '../domain/records/create.js';
import { remove } from '../domain/records/delete.js';
import { familyOf } from '../domain/records/family.js';
import { list } from '../domain/records/list.js';
import { update } from '../domain/records/update.js';
import type { Family } from '../errors.js';
import { parseIdOnly, parseWith } from '../schemas/common.js';
import { type Entity, listParseSchema, type RecordOf } from '../schemas/entities/index.js';
import { parseRecordBody } from '../schemas/record-body.js';
import { operation, type RunWrapper } from './operation.js';

/** `<family>-create` with the wrap its declaration asks for (idempotent-records.ts `createHandler`). */
export const createOperation = <D extends Entity>(entity: D, wrap: RunWrapper | undefined) =>
  operation({
    name: `${entity.family}-create`,
    family: entity.family as Family,
    access: 'write',
    wrap,
    parse: (body) => parseRecordBody(entity, body, 'create'),
    run: (input, ctx) => create(familyOf(entity), ctx, input) as Promise<RecordOf<D>>,
  });

export const getHandler = <D extends Entity>(entity: D) =>
  operation({
    name: `${entity.family}-get`,
    family: entity.family as Family,
    access: 'read',
    parse: (body) => parseIdOnly(entity.family as Family, body),
    run: ({ id }, ctx) => get(familyOf(entity), ctx, id) as Promise<RecordOf<D>>,
  });

export const updateHandler = <D extends Entity>(entity: D) =>
  operation({
    name: `${entity.family}-update`,
    family: entity.family as Family,
    access: 'write',
    parse: (body) => parseRecordBody(entity, body, 'update'),
    run: (input, ctx) => update(familyOf(entity), ctx, input) as Promise<RecordOf<D>>,
  });

export const deleteHandler = <D extends Entity>(entity: D) =>
  operation({
    name: `${entity.family}-delete`,
    family: entity.family as Family,
    access: 'write',
    parse: (body) => parseIdOnly(entity.family as Family, body),
    run: ({ id }, ctx) => remove(familyOf(entity), ctx, id),
  });

export const listHandler = <D extends Entity>(entity: D) =>
  operation({
    name: `${entity.family}-list`,
    family: entity.family as Family,
    access: 'read',
    parse: (body) => parseWith(entity.family as Family, listParseSchema(entity), body) as Record<string, unknown>,
    run: (input, ctx) => list(familyOf(entity), ctx, input),
  });
