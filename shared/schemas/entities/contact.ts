import { f } from '../fields.js';
import { defineEntity } from './define.js';

export const contactEntity = defineEntity({
  type: 'contact',
  family: 'contacts',
  label: 'contact',
  description: 'A person: linked to a company and a lead source, tagged, with custom field values.',
  fields: {
    first_name: f.name({ description: 'First name (required on create, 1–200 characters)', example: 'Ada' }),
    last_name: f.text({ description: 'Last name', example: 'Lovelace' }),
    email: f.email({ description: 'Email address ("" or a valid address of at most 254 characters)', example: 'ada@example.com' }),
    phone: f.text({ description: 'Phone number', example: '+1 (555) 123-4567' }),
    company_id: f.ref({ description: 'Company the contact works for (a company of the account), or null', example: '9b2f8a4e-1c3d-4e5f-8a9b-0c1d2e3f4a5b' }, 'company', 'company_name'),
    company_name: f.computed.text({ description: 'Read-only: the current name of the company', example: 'Analytical Engines Ltd' }),
    job_title: f.text({ description: 'Job title', example: 'Head of Research' }),
    address: f.text({ description: 'Street address', example: '12 St James Square' }),
    city: f.text({ description: 'City', example: 'London' }),
    state: f.text({ description: 'State or province', example: 'Greater London' }),
    zip_code: f.text({ description: 'ZIP or postal code', example: 'SW1Y 4JH' }),
    country: f.text({ description: 'Country', example: 'United Kingdom' }),
    notes: f.text({ description: 'Free text, at most 10,000 characters', example: 'Met at the 1843 conference.' }, 10_000),
    tags: f.tags({ description: 'Tags: at most 50, each 1–64 characters; duplicates dropped; case-sensitive', example: ['vip', 'newsletter'] }),
    source_id: f.ref({ description: 'Lead source (a source of the account), or null', example: '1d2c3b4a-5e6f-4a7b-8c9d-0e1f2a3b4c5d' }, 'source', 'source_name'),
    source_name: f.computed.text({ description: 'Read-only: the current name of the lead source', example: 'Conference' }),
    custom_fields: f.customFields({
      description: 'Custom field values keyed by custom-field definition id (see custom-fields-list), not by name; null removes a key on update',
      example: { '7c9e6679-7425-40de-944b-e07fc1f90ae7': 'Gold' },
    }),
  },
  required: 'first_name',
  search: (r) => ({ text: [String(r.first_name ?? ''), String(r.last_name ?? ''), String(r.company_name ?? '')], emails: [String(r.email ?? '')], phones: [String(r.phone ?? '')] }),
  exactEmailSearch: true,
  lookup: { field: 'email', index: 'email' },
  filters: {
    tags: { kind: 'tags', field: 'tags' },
    company_id: { kind: 'ref', field: 'company_id' },
    company_ids: { kind: 'refs', field: 'company_id', max: 50 },
    source_ids: { kind: 'refs', field: 'source_id', max: 50 },
  },
  events: true,
  trash: true,
  merge: true,
  erase: true,
  docs: {
    list: 'List contacts, newest first (search across name, email, phone and company name; tags, company and source filters; cursor pagination)',
    delete: 'Delete a contact (it is removed from projects and activities within seconds)',
  },
});
