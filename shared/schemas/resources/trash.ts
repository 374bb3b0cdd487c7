/**
 * The trash (contract §15): `trash-list`, declared once (see ../resource.ts). `<family>-restore`
 * and `<family>-merge` are the record families' own (resources/entities.ts).
 */
import { defineResource } from '../resource.js';
import { mergeInput, trashListInput, trashPage } from '../trash.js';
import { RECORD_KEYS } from '../keys/records.js';

export const trashResource = defineResource({
  family: 'trash',
  prefix: 'trash',
  keys: RECORD_KEYS,
  components: { MergeInput: mergeInput, TrashListInput: trashListInput, TrashPage: trashPage },
  operations: {
    list: {
      access: 'read',
      summary: 'List trashed records, most recently deleted first',
      description:
        'Deleted contacts, companies, projects and activities stay in the trash for TRASH_RETENTION_DAYS (default 30), then are purged. Items `{ family, record, deleted_at, purge_at }` (`record` as it was when deleted), most recently deleted first, optionally one `family`; paginated like every list. A trashed record is `not_found` to every other read; `<family>-restore` brings it back.',
      input: trashListInput,
      result: trashPage,
      errors: ['trash.invalid_cursor'],
    },
  },
});
