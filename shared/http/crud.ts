/**
 * Handlers of plain CRUD operations, derived from an entity definition: each handler file is
 * one line (`export const handler = createHandler(contactEntity, { wrap: idempotentCreate() })`).
 */
import { services } from '../domain/records.js';
import type { Family } from '../errors.js';
import { parseIdOnly, parseWith } from '../schemas/common.js';
import { type Entity, listSchema } from '../schemas/entities/index.js';
import { parseRecordBody } from '../schemas/record-body.js';
import { operation, type RunWrapper } from './operation.js';

/** An entity's domain service, typed by its definition (crud.ts, trash.ts). */
export const serviceFor = <D extends Entity>(entity: D) => services[entity.type] as unknown as ReturnType<typeof import('../domain/entity-service.js').entityService<D>>;

export const createHandler = <D extends Entity>(entity: D, opts: { wrap?: RunWrapper } = {}) =>
  operation({
    name: `${entity.family}-create`,
    family: entity.family as Family,
    wrap: opts.wrap,
    parse: (body) => parseRecordBody(entity, body, 'create'),
    run: (input, ctx) => serviceFor(entity).create(ctx, input),
  });

export const getHandler = <D extends Entity>(entity: D) =>
  operation({
    name: `${entity.family}-get`,
    family: entity.family as Family,
    parse: (body) => parseIdOnly(entity.family as Family, body),
    run: ({ id }, ctx) => serviceFor(entity).get(ctx, id),
  });

export const updateHandler = <D extends Entity>(entity: D) =>
  operation({
    name: `${entity.family}-update`,
    family: entity.family as Family,
    parse: (body) => parseRecordBody(entity, body, 'update'),
    run: (input, ctx) => serviceFor(entity).update(ctx, input),
  });

export const deleteHandler = <D extends Entity>(entity: D) =>
  operation({
    name: `${entity.family}-delete`,
    family: entity.family as Family,
    parse: (body) => parseIdOnly(entity.family as Family, body),
    run: ({ id }, ctx) => serviceFor(entity).delete(ctx, id),
  });

export const listHandler = <D extends Entity>(entity: D) =>
  operation({
    name: `${entity.family}-list`,
    family: entity.family as Family,
    parse: (body) => parseWith(entity.family as Family, listSchema(entity), body) as Record<string, unknown>,
    run: (input, ctx) => serviceFor(entity).list(ctx, input),
  });
