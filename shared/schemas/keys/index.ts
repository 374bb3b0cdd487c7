/**
 * Every key declaration, by owner. shared/db/table.ts derives the key builders from this list
 * (and only from it); each family's resource definition carries its own (`keys`, `indexes`).
 */
import { ACCOUNT_KEYS, ACCOUNT_META_ATTRIBUTES, ACCOUNT_PERSONAL } from './account.js';
import { API_KEY_KEYS, API_KEY_PERSONAL } from './api-keys.js';
import { CUSTOM_FIELD_KEYS, CUSTOM_FIELD_PERSONAL } from './custom-fields.js';
import { ERASURE_KEYS, ERASURE_PERSONAL } from './erasures.js';
import { EVENT_KEYS, EVENT_PERSONAL } from './events.js';
import { EXPORT_KEYS, EXPORT_PERSONAL } from './exports.js';
import { IMPORT_KEYS, IMPORT_PERSONAL } from './imports.js';
import { INBOUND_EMAIL_KEYS, INBOUND_EMAIL_PERSONAL } from './inbound-emails.js';
import { MEMBER_KEYS, MEMBER_PERSONAL } from './members.js';
import { PIPELINE_KEYS, PIPELINE_PERSONAL } from './pipelines.js';
import { RECORD_INDEX_NAMES, RECORD_KEYS, RECORD_PERSONAL, REFERENCE_TAGS } from './records.js';
export type { ReferenceTarget } from './records.js';
import { WEBHOOK_KEYS, WEBHOOK_PERSONAL } from './webhooks.js';

export { ACCOUNT_KEYS, ACCOUNT_META_ATTRIBUTES, API_KEY_KEYS, CUSTOM_FIELD_KEYS, ERASURE_KEYS, EVENT_KEYS, EXPORT_KEYS, IMPORT_KEYS, INBOUND_EMAIL_KEYS, MEMBER_KEYS, PIPELINE_KEYS, RECORD_INDEX_NAMES, RECORD_KEYS, REFERENCE_TAGS, WEBHOOK_KEYS };
export * from './define.js';

/** The table's keys: one builder each in `keys` of shared/db/table.ts (names are unique across owners). */
export const TABLE_KEYS = { ...RECORD_KEYS, ...ACCOUNT_KEYS, ...CUSTOM_FIELD_KEYS, ...WEBHOOK_KEYS, ...INBOUND_EMAIL_KEYS, ...IMPORT_KEYS, ...EXPORT_KEYS, ...API_KEY_KEYS, ...EVENT_KEYS, ...ERASURE_KEYS, ...PIPELINE_KEYS, ...MEMBER_KEYS } as const;

/**
 * Whether each item kind (every table key above) holds record data, a person's data (contract
 * §18): declared beside each family's keys with `personalFlags`. The erasure reaches every kind
 * that says `true` (shared/erasures/paths.ts). Built in a call marked `@__PURE__` (as is each
 * family's flags), so the functions that never read it (all but the erasure's) drop it.
 */
export const PERSONAL = /* @__PURE__ */ (() =>
  ({
  ...RECORD_PERSONAL,
  ...ACCOUNT_PERSONAL,
  ...CUSTOM_FIELD_PERSONAL,
  ...WEBHOOK_PERSONAL,
  ...INBOUND_EMAIL_PERSONAL,
  ...IMPORT_PERSONAL,
  ...EXPORT_PERSONAL,
  ...API_KEY_PERSONAL,
  ...EVENT_PERSONAL,
  ...ERASURE_PERSONAL,
  ...PIPELINE_PERSONAL,
  ...MEMBER_PERSONAL,
}) as const)();
/** The item kinds that hold a person's data. */
export type PersonalKind = { [N in keyof typeof PERSONAL]: (typeof PERSONAL)[N] extends true ? N : never }[keyof typeof PERSONAL];
