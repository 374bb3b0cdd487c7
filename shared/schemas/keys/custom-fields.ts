/** Keys of custom-field definitions (contract §3): one partition per account. */
import { ACCOUNT, defineKeys, personalFlags } from './define.js';

const FIELDS = `${ACCOUNT}#cf`;

export const CUSTOM_FIELD_KEYS = defineKeys({
  customField: [FIELDS, '{id}'],
  customFieldPartition: FIELDS,
});

export const CUSTOM_FIELD_PERSONAL = personalFlags(CUSTOM_FIELD_KEYS, { customField: false });
