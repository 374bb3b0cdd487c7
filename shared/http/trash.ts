/**
 * Handlers of the trash operations (contract §15), derived from an entity definition like the
 * CRUD ones: `export const handler = restoreHandler(contactEntity);`.
 */
import type { Family } from '../errors.js';
import { parseIdOnly } from '../schemas/common.js';
import type { Entity, RecordOf } from '../schemas/entities/index.js';
import { parseMerge } from '../schemas/trash.js';
import { familyOf } from '../domain/records/family.js';
import { merge } from '../domain/records/merge.js';
import { restore } from '../domain/records/restore.js';
import { operation } from './operation.js';

export const restoreHandler = <D extends Entity>(entity: D) =>
  operation({
    name: `${entity.family}-restore`,
    family: entity.family as Family,
    access: 'write',
    parse: (body) => parseIdOnly(entity.family as Family, body),
    run: ({ id }, ctx) => restore(familyOf(entity), ctx, id) as Promise<RecordOf<D>>,
  });

export const mergeHandler = <D extends Entity>(entity: D) =>
  operation({
    name: `${entity.family}-merge`,
    family: entity.family as Family,
    access: 'write',
    parse: (body) => parseMerge(entity.family as Family, body),
    run: (input, ctx) => merge(familyOf(entity), ctx, input.primary_id, input.secondary_id) as Promise<RecordOf<D>>,
  });

