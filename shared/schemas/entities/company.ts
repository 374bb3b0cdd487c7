import { f } from '../fields.js';
import { defineEntity } from './define.js';

export const companyEntity = defineEntity({
  type: 'company',
  family: 'companies',
  label: 'company',
  description: 'An organization: the employer of contacts and the client of projects.',
  fields: {
    name: f.name({ description: 'Company name (required on create, 1–200 characters)', example: 'Analytical Engines Ltd' }),
    domain: f.text({ description: 'Primary domain', example: 'analytical-engines.example' }),
    industry: f.text({ description: 'Industry', example: 'Computing' }),
    notes: f.text({ description: 'Free text, at most 10,000 characters', example: 'Key account since 1842.' }, 10_000),
    phone: f.text({ description: 'Phone number', example: '+44 20 7946 0000' }),
    website: f.url({ description: 'Website ("" or an http(s) URL of at most 2,048 characters)', example: 'https://analytical-engines.example' }),
    social_url: f.url({ description: 'Social-network profile URL ("" or an http(s) URL)', example: 'https://social.example/analytical-engines' }),
    address: f.text({ description: 'Street address', example: '12 St James Square' }),
    city: f.text({ description: 'City', example: 'London' }),
    state: f.text({ description: 'State or province', example: 'Greater London' }),
    zip_code: f.text({ description: 'ZIP or postal code', example: 'SW1Y 4JH' }),
    country: f.text({ description: 'Country', example: 'United Kingdom' }),
    employee_count: f.count({ description: 'Number of employees (null, or an integer ≥ 0)', example: 120 }),
    annual_revenue: f.count({ description: 'Annual revenue in cents (null, or an integer ≥ 0)', example: 1250000000 }),
    owner_id: f.ref({ description: 'Owner: an active member of the account (see members-list), or null. A member deactivated later stays the owner', example: '7b3e2a1c-5d4f-4e6a-8b9c-0d1e2f3a4b5c' }, 'member', 'owner_name'),
    owner_name: f.computed.text({ description: 'Read-only: the current name of the owner ("" when unowned)', example: 'Grace Hopper' }),
    tags: f.tags({ description: 'Tags: at most 50, each 1–64 characters; duplicates dropped; case-sensitive', example: ['enterprise'] }),
    custom_fields: f.customFields({
      description: 'Custom field values keyed by custom-field definition id (see custom-fields-list), not by name; null removes a key on update',
      example: { '7c9e6679-7425-40de-944b-e07fc1f90ae7': 'EMEA' },
    }),
  },
  required: 'name',
  search: (r) => ({ text: [String(r.name ?? '')], domains: [String(r.domain ?? '')] }),
  lookup: { field: 'domain', index: 'domain' },
  sorted: ['name', 'owner_id', 'updated_at'],
  filters: { tags: { kind: 'tags', field: 'tags' }, owner_id: { kind: 'ref', field: 'owner_id', none: true } },
  events: true,
  trash: true,
  merge: true,
  docs: {
    list: 'List companies, newest first (search by name and domain, tags, owner_id (a member id or "none"), cursor pagination)',
    delete: 'Delete a company (its contacts, projects and activities lose their link to it)',
  },
});
