/**
 * Every key declaration, by owner. shared/db/table.ts derives the key builders from this list
 * (and only from it); each family's resource definition carries its own (`keys`, `indexes`).
 */
import { ACCOUNT_KEYS, ACCOUNT_META_ATTRIBUTES } from './account.js';
import { API_KEY_KEYS } from './api-keys.js';
import { CUSTOM_FIELD_KEYS } from './custom-fields.js';
import { EVENT_KEYS } from './events.js';
import { EXPORT_KEYS } from './exports.js';
import { IMPORT_KEYS } from './imports.js';
import { INBOUND_EMAIL_KEYS } from './inbound-emails.js';
import { RECORD_INDEX_NAMES, RECORD_KEYS, REFERENCE_TAGS } from './records.js';
import { WEBHOOK_KEYS } from './webhooks.js';

export { ACCOUNT_KEYS, ACCOUNT_META_ATTRIBUTES, API_KEY_KEYS, CUSTOM_FIELD_KEYS, EVENT_KEYS, EXPORT_KEYS, IMPORT_KEYS, INBOUND_EMAIL_KEYS, RECORD_INDEX_NAMES, RECORD_KEYS, REFERENCE_TAGS, WEBHOOK_KEYS };
export * from './define.js';

/** The table's keys: one builder each in `keys` of shared/db/table.ts (names are unique across owners). */
export const TABLE_KEYS = { ...RECORD_KEYS, ...ACCOUNT_KEYS, ...CUSTOM_FIELD_KEYS, ...WEBHOOK_KEYS, ...INBOUND_EMAIL_KEYS, ...IMPORT_KEYS, ...EXPORT_KEYS, ...API_KEY_KEYS, ...EVENT_KEYS } as const;
