/**
 * The count summaries (contract §21): `contacts-summary`, `companies-summary`,
 * `activities-summary`: their bodies, answer and declarations (the families' resources add them
 * as `summary`: resources/entities.ts). Apart from summaries.ts, so that the board and the changes
 * worker do not carry them.
 */
import * as v from 'valibot';
import { COUNT_GROUP_BY, summaryResult } from './summaries.js';

const d = <S extends v.GenericSchema>(schema: S, description: string, example?: unknown) =>
  v.pipe(schema, v.metadata({ description, ...(example !== undefined ? { examples: [example] } : {}) }));

const groupBy = <T extends readonly [string, ...string[]]>(options: T, description: string) =>
  d(v.picklist(options, `must be ${options.join(' or ')}`), description, options[0]);

export const contactsSummaryInput = v.strictObject({
  group_by: groupBy(COUNT_GROUP_BY.contact, 'owner (every active member by name, then deactivated members owning counted contacts, then null: unowned) or source (every lead source by name, then null: no source)'),
});
export const companiesSummaryInput = v.strictObject({
  group_by: groupBy(COUNT_GROUP_BY.company, 'owner (every active member by name, then deactivated members owning counted companies, then null: unowned)'),
});
export const activitiesSummaryInput = v.strictObject({
  group_by: groupBy(COUNT_GROUP_BY.activity, 'assignee (every active member by name, then deactivated members assigned counted activities, then null: unassigned) or type (every activity type)'),
  completed: v.optional(d(v.boolean('must be true or false'), 'Only completed activities (true) or only the others (false: every activity but a completed task); every activity when absent', false)),
});
export type CountSummaryInput = { group_by: string; completed?: boolean };

const countGroupSchema = v.object({
  key: d(v.nullable(v.string()), 'The group: a member id, a lead source id, an activity type (null: unowned, unassigned, no source)', '5d0c7a8e-2b1f-4c3d-9e8f-7a6b5c4d3e2f'),
  label: d(v.string(), 'The member\'s or lead source\'s current name, the activity type', 'Ada Lovelace'),
  count: d(v.pipe(v.number(), v.integer()), 'Records in the group (trashed ones count nowhere)', 3),
});

export const countSummaryResult = v.object({
  groups: d(v.array(countGroupSchema), 'Every group, even when empty (members by name, lead sources by name, activity types), then null where the grouping has it'),
  total: d(v.object({ count: countGroupSchema.entries.count }), 'The groups together'),
  as_of: summaryResult.entries.as_of,
});
export type CountSummaryResult = v.InferOutput<typeof countSummaryResult>;

const countSummaryOperation = <I extends v.GenericSchema>(records: string, input: I, by: string) =>
  ({
    access: 'read',
    summary: `Counts of ${records} by ${by}`,
    description: `Answered from counters the changes worker keeps (within 5 s of a write locally; exact once writes stop): reads bounded by the number of groups, whatever the number of ${records}. Every group is present even when empty; \`label\` is the current name. Errors: \`<family>.invalid_request\` with \`details\`.`,
    input,
    result: countSummaryResult,
    items: { reads: ['summaries'] },
  }) as const;

export const contactsSummaryOperation = countSummaryOperation('contacts', contactsSummaryInput, 'owner or lead source');
export const companiesSummaryOperation = countSummaryOperation('companies', companiesSummaryInput, 'owner');
export const activitiesSummaryOperation = countSummaryOperation('activities', activitiesSummaryInput, 'assignee or type, all or only (not) completed');
