/**
 * The handler of a family's stage history (contract §19, projects-stage-history), built from its
 * declaration like the other record verbs (records.ts): `export const handler = stageHistoryHandler(projectEntity);`.
 */
import { stageHistory } from '../domain/stage-history.js';
import { stageHistoryOperation } from '../schemas/pipelines.js';
import { parseOperation } from '../schemas/resource.js';
import { ENTITY_OPERATIONS } from '../schemas/resources/entity-operations.js';
import { recordHandler } from './records.js';

const declaration = { ...ENTITY_OPERATIONS['stage-history'], ...stageHistoryOperation };

export const stageHistoryHandler = /* @__PURE__ */ recordHandler('stage-history', {
  parse: (entity, body) => parseOperation(entity.family, declaration, body),
  run: (_entity, ctx, input) => stageHistory(ctx, input),
});
