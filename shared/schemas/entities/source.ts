import { f } from '../fields.js';
import { defineEntity } from './define.js';

export const sourceEntity = defineEntity({
  type: 'source',
  family: 'sources',
  label: 'lead source',
  description: 'Where contacts come from (a campaign, a conference, a referral).',
  fields: {
    name: f.name({ description: 'Name of the lead source (required, 1–200 characters)', example: 'Conference' }),
  },
  required: 'name',
  filters: {},
  events: false,
  docs: {
    list: 'List lead sources, newest first (cursor pagination)',
    update: 'Rename a lead source (contacts show the new name at once)',
    delete: 'Delete a lead source (its contacts lose their source link)',
  },
});
