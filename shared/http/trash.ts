/**
 * Handlers of the trash operations (contract §15), derived from an entity definition like the
 * CRUD ones: `export const handler = restoreHandler(contactEntity);`.
 */
import type { Family } from '../errors.js';
import { parseIdOnly } from '../schemas/common.js';
import type { Entity } from '../schemas/entities/index.js';
import { parseMerge } from '../schemas/trash.js';
import { serviceFor } from './crud.js';
import { operation } from './operation.js';

export const restoreHandler = <D extends Entity>(entity: D) =>
  operation({
    name: `${entity.family}-restore`,
    family: entity.family as Family,
    parse: (body) => parseIdOnly(entity.family as Family, body),
    run: ({ id }, ctx) => serviceFor(entity).restore(ctx, id),
  });

export const mergeHandler = <D extends Entity>(entity: D) =>
  operation({
    name: `${entity.family}-merge`,
    family: entity.family as Family,
    parse: (body) => parseMerge(entity.family as Family, body),
    run: (input, ctx) => serviceFor(entity).merge(ctx, input.primary_id, input.secondary_id),
  });

