/**
 * The handlers of the summaries (contract §21): `projects-summary`, and the counts of
 * `contacts-summary`, `companies-summary`, `activities-summary`. Name, family, access and parse
 * from their declarations (shared/schemas/summaries.ts; as stage-history, not a verb of every
 * record family): `export const handler = summaryHandler(contactEntity);`.
 */
import { countSummary, projectsSummary } from '../domain/summary-reads.js';
import type { Entity } from '../schemas/entities/index.js';
import { operationName, parseOperation } from '../schemas/resource.js';
import { activitiesSummaryOperation, companiesSummaryOperation, contactsSummaryOperation, type CountSummaryInput } from '../schemas/count-summaries.js';
import { type CountedType, type ProjectsSummaryInput, projectsSummaryOperation } from '../schemas/summaries.js';
import { operation } from './operation.js';

const COUNT_OPERATIONS = { contact: contactsSummaryOperation, company: companiesSummaryOperation, activity: activitiesSummaryOperation };

export const summaryHandler = (entity: Entity) => {
  const name = operationName({ prefix: entity.family }, 'summary');
  if (entity.type === 'project') {
    return operation({
      name,
      family: entity.family,
      access: projectsSummaryOperation.access,
      parse: (body) => parseOperation(entity.family, projectsSummaryOperation, body) as ProjectsSummaryInput,
      run: (input, ctx) => projectsSummary(ctx, input),
    });
  }
  const type = entity.type as CountedType;
  const decl = COUNT_OPERATIONS[type];
  return operation({
    name,
    family: entity.family,
    access: decl.access,
    parse: (body) => parseOperation(entity.family, decl, body) as CountSummaryInput,
    run: (input, ctx) => countSummary(ctx, type, input),
  });
};
