/**
 * The handler of projects-summary (contract §21): name, family, access and parse from its
 * declaration (projectsSummaryOperation, shared/schemas/summaries.ts; as stage-history, not a verb
 * of every record family): `export const handler = summaryHandler(projectEntity);`.
 */
import { projectsSummary } from '../domain/summaries.js';
import type { Entity } from '../schemas/entities/index.js';
import { operationName, parseOperation } from '../schemas/resource.js';
import { type ProjectsSummaryInput, projectsSummaryOperation } from '../schemas/summaries.js';
import { operation } from './operation.js';

export const summaryHandler = (entity: Entity) =>
  operation({
    name: operationName({ prefix: entity.family }, 'summary'),
    family: entity.family,
    access: projectsSummaryOperation.access,
    parse: (body) => parseOperation(entity.family, projectsSummaryOperation, body) as ProjectsSummaryInput,
    run: (input, ctx) => projectsSummary(ctx, input),
  });
