/**
 * The API description of the trash, restore and merge operations (contract §15), derived from
 * the entity list like the batch docs: `-restore` for every entity with a trash, `-merge` for
 * every entity that merges, and `trash-list`. See operations.ts for the shape of an entry.
 */
import type * as v from 'valibot';
import { idOnlyInput } from '../schemas/common.js';
import { type Entity, type EntityDefinition, MERGE_ENTITIES, recordSchema, type RecordOf, TRASH_ENTITIES } from '../schemas/entities/index.js';
import { mergeInput, trashListInput, trashPage, type TrashPage } from '../schemas/trash.js';
import type { OperationDoc } from './doc-types.js';

/** Named component schemas of the trash operations. */
export const trashComponentSchemas: Record<string, v.GenericSchema> = {
  MergeInput: mergeInput,
  TrashListInput: trashListInput,
  TrashPage: trashPage,
};

type Doc<I, R> = OperationDoc & { input: v.GenericSchema<I>; result: v.GenericSchema<unknown, R> };
type TrashEntity = (typeof TRASH_ENTITIES)[number];
type MergeEntity = (typeof MERGE_ENTITIES)[number];
type RestoreDocs<D extends Entity> = { [K in `${D['family']}-restore`]: Doc<{ id: string }, RecordOf<D>> };
type MergeDocs<D extends Entity> = { [K in `${D['family']}-merge`]: Doc<{ primary_id: string; secondary_id: string }, RecordOf<D>> };
type UnionToIntersection<U> = (U extends unknown ? (k: U) => void : never) extends (k: infer I) => void ? I : never;

function restoreDoc(entity: Entity): Record<string, OperationDoc> {
  const def = entity as unknown as EntityDefinition;
  const p = def.family;
  return {
    [`${p}-restore`]: {
      summary: `Restore a ${def.label} from the trash`,
      description:
        `Brings a deleted ${def.label} back with its id, fields, \`created_at\` and its own links (a link to a record that is gone is dropped), and undoes its deletion's cascades where nothing changed them since (within seconds: the stream worker re-links them, raising their \`*.updated\` events). Raises \`${def.type}.restored\` (body as \`${def.type}.created\`). ` +
        `Not in the trash (never deleted, restored already, purged after TRASH_RETENTION_DAYS, or another account's): \`${p}.not_found\`.`,
      input: idOnlyInput,
      result: recordSchema(def),
      errors: [`${p}.invalid_id`, `${p}.not_found`],
    },
  };
}

function mergeDoc(entity: Entity): Record<string, OperationDoc> {
  const def = entity as unknown as EntityDefinition;
  const p = def.family;
  const links = def.type === 'contact' ? "activities' and projects' `contact_ids`, inbound emails' `matched_contact_ids`" : "contacts', projects' and activities' `company_id`";
  return {
    [`${p}-merge`]: {
      summary: `Merge a duplicate ${def.label} into another`,
      description:
        `The primary keeps its non-empty fields and takes the secondary's where its own are empty; \`tags\` are the union (the primary's first); \`custom_fields\` merge by key, the primary's value winning. The secondary goes to the trash (restorable; restoring it does not undo the merge) and its links move to the primary (${links}): ` +
        `the answer comes once the two records are merged, and the links follow within seconds (the stream worker moves them in chunks of a few hundred, resuming after a crash). ` +
        `Events: \`${def.type}.updated\` for the primary (with \`previous_attributes\`), \`${def.type}.deleted\` for the secondary, \`*.updated\` for every re-pointed record, and \`${def.type}.merged\` (\`data\` the primary, \`merged_id\` the secondary's id). ` +
        `The same id twice: \`${p}.invalid_request\`; either missing: \`${p}.not_found\`.`,
      input: mergeInput,
      result: recordSchema(def),
      errors: [`${p}.invalid_id`, `${p}.not_found`, `${p}.conflict`],
    },
  };
}

/** The trash docs, typed per entity (the client's `crm.contacts.restore`, `crm.companies.merge`). */
export const trashOperationDocs = Object.assign(
  {
    'trash-list': {
      summary: 'List trashed records, most recently deleted first',
      description:
        'Deleted contacts, companies, projects and activities stay in the trash for TRASH_RETENTION_DAYS (default 30), then are purged. Items `{ family, record, deleted_at, purge_at }` (`record` as it was when deleted), most recently deleted first, optionally one `family`; paginated like every list. A trashed record is `not_found` to every other read; `<family>-restore` brings it back.',
      input: trashListInput,
      result: trashPage,
      errors: ['trash.invalid_cursor'],
    } as Doc<v.InferInput<typeof trashListInput>, TrashPage>,
  },
  ...TRASH_ENTITIES.map(restoreDoc),
  ...MERGE_ENTITIES.map(mergeDoc),
) as { 'trash-list': Doc<v.InferInput<typeof trashListInput>, TrashPage> } & UnionToIntersection<TrashEntity extends infer E ? (E extends Entity ? RestoreDocs<E> : never) : never> &
  UnionToIntersection<MergeEntity extends infer E ? (E extends Entity ? MergeDocs<E> : never) : never>;
