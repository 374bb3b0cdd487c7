/**
 * The handler of a family's stage history (contract §19, projects-stage-history): name, family,
 * access and parse from its declaration (stageHistoryOperation, beside the pipelines; not a verb of
 * every record family, so not an entry of ENTITY_OPERATIONS, which every record bundle carries):
 * `export const handler = stageHistoryHandler(projectEntity);`.
 */
import { stageHistory } from '../domain/stage-history.js';
import type { Entity } from '../schemas/entities/index.js';
import { stageHistoryOperation } from '../schemas/pipelines.js';
import { operationName, parseOperation } from '../schemas/resource.js';
import { operation } from './operation.js';

export const stageHistoryHandler = (entity: Entity) =>
  operation({
    name: operationName({ prefix: entity.family }, 'stage-history'),
    family: entity.family,
    access: stageHistoryOperation.access,
    parse: (body) => parseOperation(entity.family, stageHistoryOperation, body),
    run: (input, ctx) => stageHistory(ctx, input),
  });
