/**
 * The API description of every operation, in one place: the valibot schema its body is
 * validated with, the schema of its result, a summary, and the error codes it can return
 * besides the ones every operation of its kind returns (see errors.ts).
 *
 * The OpenAPI document (document.ts) and the typed client (client/) are both derived from
 * this table; nothing here is written twice. A registry entry without a line here makes the
 * document generation fail (test/unit/openapi.test.ts).
 */
import * as v from 'valibot';
import { companyBody } from '../domain/companies.js';
import { contactBody } from '../domain/contacts.js';
import { sourceBody } from '../domain/sources.js';
import { idOnlyInput } from '../schemas/common.js';
import { recordBodySchema } from '../schemas/record-body.js';
import {
  companyListInput,
  companySchema,
  contactListInput,
  contactSchema,
  customFieldCreateInput,
  customFieldListInput,
  customFieldSchema,
  customFieldUpdateInput,
  sourceListInput,
  sourceSchema,
} from '../schemas/records.js';
import type { OperationDoc } from './doc-types.js';
import { webhookComponentSchemas, webhookOperationDocs } from './webhook-docs.js';

export type { OperationDoc };

/** Named component schemas: the document refers to these by name wherever they are used. */
export const deletedSchema = v.object({ deleted: v.literal(true) });
const pageOf = <S extends v.GenericSchema>(item: S) => v.object({ items: v.array(item), next_cursor: v.string() });
export const companyPage = pageOf(companySchema);
export const contactPage = pageOf(contactSchema);
export const sourcePage = pageOf(sourceSchema);
export const customFieldList = v.object({ items: v.array(customFieldSchema) });

export const companyCreateInput = recordBodySchema(companyBody, 'create');
export const companyUpdateInput = recordBodySchema(companyBody, 'update');
export const contactCreateInput = recordBodySchema(contactBody, 'create');
export const contactUpdateInput = recordBodySchema(contactBody, 'update');
export const sourceCreateInput = recordBodySchema(sourceBody, 'create');
export const sourceUpdateInput = recordBodySchema(sourceBody, 'update');

export const componentSchemas: Record<string, v.GenericSchema> = {
  Company: companySchema,
  Contact: contactSchema,
  Source: sourceSchema,
  CustomField: customFieldSchema,
  Deleted: deletedSchema,
  CompanyPage: companyPage,
  ContactPage: contactPage,
  SourcePage: sourcePage,
  CustomFieldList: customFieldList,
  IdInput: idOnlyInput,
  CompanyListInput: companyListInput,
  CompanyCreateInput: companyCreateInput,
  CompanyUpdateInput: companyUpdateInput,
  ContactListInput: contactListInput,
  ContactCreateInput: contactCreateInput,
  ContactUpdateInput: contactUpdateInput,
  SourceListInput: sourceListInput,
  SourceCreateInput: sourceCreateInput,
  SourceUpdateInput: sourceUpdateInput,
  CustomFieldListInput: customFieldListInput,
  CustomFieldCreateInput: customFieldCreateInput,
  CustomFieldUpdateInput: customFieldUpdateInput,
  ...webhookComponentSchemas,
};

const REF_ERRORS = ['contacts.invalid_company_id', 'contacts.invalid_source_id'] as const;

export const operationDocs = {
  'companies-list': { summary: 'List companies, newest first (search, tags, cursor pagination)', input: companyListInput, result: companyPage },
  'companies-get': { summary: 'Get a company', input: idOnlyInput, result: companySchema },
  'companies-create': { summary: 'Create a company', input: companyCreateInput, result: companySchema },
  'companies-update': { summary: 'Update a company (partial)', input: companyUpdateInput, result: companySchema },
  'companies-delete': { summary: 'Delete a company (its contacts lose their company link)', input: idOnlyInput, result: deletedSchema },

  'contacts-list': { summary: 'List contacts, newest first (search, tags, company and source filters, cursor pagination)', input: contactListInput, result: contactPage },
  'contacts-get': { summary: 'Get a contact', input: idOnlyInput, result: contactSchema },
  'contacts-create': { summary: 'Create a contact', input: contactCreateInput, result: contactSchema, errors: REF_ERRORS },
  'contacts-update': { summary: 'Update a contact (partial)', input: contactUpdateInput, result: contactSchema, errors: REF_ERRORS },
  'contacts-delete': { summary: 'Delete a contact', input: idOnlyInput, result: deletedSchema },

  'custom-fields-list': { summary: 'List custom field definitions', input: customFieldListInput, result: customFieldList },
  'custom-fields-get': { summary: 'Get a custom field definition', input: idOnlyInput, result: customFieldSchema },
  'custom-fields-create': { summary: 'Define a custom field for contacts or companies', input: customFieldCreateInput, result: customFieldSchema },
  'custom-fields-update': { summary: 'Update a custom field definition (name, description, options)', input: customFieldUpdateInput, result: customFieldSchema },
  'custom-fields-delete': { summary: 'Delete a custom field definition and its values on every record', input: idOnlyInput, result: deletedSchema },

  'sources-list': { summary: 'List lead sources, newest first (cursor pagination)', input: sourceListInput, result: sourcePage },
  'sources-get': { summary: 'Get a lead source', input: idOnlyInput, result: sourceSchema },
  'sources-create': { summary: 'Create a lead source', input: sourceCreateInput, result: sourceSchema },
  'sources-update': { summary: 'Rename a lead source', input: sourceUpdateInput, result: sourceSchema },
  'sources-delete': { summary: 'Delete a lead source (its contacts lose their source link)', input: idOnlyInput, result: deletedSchema },

  ...webhookOperationDocs,
} satisfies Record<string, OperationDoc>;

export type OperationName = keyof typeof operationDocs;

/** Request and result types of every operation, for the client (type-only import). */
export type OperationTypes = {
  [K in OperationName]: {
    input: v.InferInput<(typeof operationDocs)[K]['input']>;
    result: v.InferOutput<(typeof operationDocs)[K]['result']>;
  };
};
