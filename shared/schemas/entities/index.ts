/**
 * The list of entity definitions: one line per resource family stored as records. Entity types,
 * error families, registry entries, OpenAPI components, webhook events and the stream fan-out
 * all derive from this list (see docs/architecture.md, "How to add a family").
 *
 * The modules of this folder are declarations without side effects, and say so
 * (`"sideEffects": false` in ./package.json): a bundle keeps the definitions it uses and drops
 * the others. So that a bundle that imports a definition from here does not keep them all, the
 * lists derived below are marked pure (`@__PURE__`: dropped when unused); a function that reads
 * one of them bundles every definition (docs/performance.md, "Cold start").
 */
import { activityEntity } from './activity.js';
import { companyEntity } from './company.js';
import { contactEntity } from './contact.js';
import { type AnyChange, changesOf } from './define.js';
import { projectEntity } from './project.js';
import { sourceEntity } from './source.js';

export const ENTITIES = [companyEntity, contactEntity, sourceEntity, projectEntity, activityEntity] as const;

export type Entity = (typeof ENTITIES)[number];
export type EntityType = Entity['type'];
export type EntityFamily = Entity['family'];

export const entityByType = (type: string): Entity | undefined => ENTITIES.find((e) => e.type === type);

/** Entities whose changes raise webhook events. */
export const EVENT_ENTITIES = /* @__PURE__ */ ENTITIES.filter((e) => e.events);

/**
 * Every event an endpoint may subscribe to: `<type>.created/updated/deleted` of each event entity,
 * `<type>.restored` of those with a trash and `<type>.merged` of those that merge (contract §15).
 */
export const ENTITY_EVENTS = /* @__PURE__ */ EVENT_ENTITIES.flatMap((e) => changesOf(e).map((c) => `${e.type}.${c}` as `${Entity['type']}.${AnyChange}`));

/** Entities whose deletions go to the trash (contract §15). */
export const TRASH_ENTITIES = /* @__PURE__ */ ENTITIES.filter((e) => 'trash' in e && e.trash);

/** Entity types custom-field definitions may target (those with a custom_fields field). */
export type CustomFieldEntityType = Extract<Entity, { fields: { custom_fields: unknown } }>['type'];
export const CUSTOM_FIELD_ENTITY_TYPES = /* @__PURE__ */ ENTITIES.filter((e) => Object.values(e.fields).some((s) => (s as { custom?: true }).custom)).map((e) => e.type) as [
  CustomFieldEntityType,
  ...CustomFieldEntityType[],
];

export { activityEntity, companyEntity, contactEntity, projectEntity, sourceEntity };
export * from './define.js';
