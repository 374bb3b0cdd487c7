import { Validator } from '@seriousme/openapi-schema-validator';
import { WEBHOOK_EVENTS } from '../../shared/schemas/webhooks.js';
import { describe, expect, it } from 'vitest';
import { operations } from '../../functions/operations.js';
import { statusForCode } from '../../shared/errors.js';
import { buildOpenApiDocument } from '../../shared/openapi/document.js';
import { operationDocs } from '../../shared/openapi/operations.js';
import { responseValidator } from '../helpers/openapi-validator.js';

const doc = buildOpenApiDocument(operations);
type Op = { operationId: string; parameters?: { name: string; in: string }[]; responses: Record<string, { description: string }>; 'x-error-codes': string[]; 'x-undocumented'?: boolean };
const op = (name: string) => doc.paths[`/api/${name}`]!.post as unknown as Op;

describe('OpenAPI document', () => {
  it('is a valid OpenAPI 3.1 document (@seriousme/openapi-schema-validator)', async () => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(doc));
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it('describes every operation of the registry, and only those', () => {
    expect(Object.keys(doc.paths).sort()).toEqual(operations.map((o) => `/api/${o.name}`).sort());
    expect(Object.keys(operationDocs).sort()).toEqual(operations.map((o) => o.name).sort());
    for (const entry of operations) {
      expect(op(entry.name).operationId).toBe(entry.name);
      expect(op(entry.name)['x-undocumented']).toBeUndefined();
    }
  });

  it('documents each error code under the status statusForCode gives it', () => {
    for (const entry of operations) {
      const o = op(entry.name);
      for (const code of o['x-error-codes']) expect(o.responses[String(statusForCode(code))]?.description).toContain(code);
      expect(o['x-error-codes']).toEqual(expect.arrayContaining(['auth.unauthorized', 'api.payload_too_large', `${entry.family}.invalid_request`, `${entry.family}.internal`]));
    }
    expect(op('contacts-list')['x-error-codes']).toContain('contacts.invalid_cursor');
    expect(op('contacts-create')['x-error-codes']).toEqual(expect.arrayContaining(['contacts.first_name_required', 'contacts.invalid_company_id', 'contacts.invalid_source_id', 'contacts.invalid_custom_fields', 'contacts.conflict']));
    expect(op('companies-get')['x-error-codes']).toEqual(expect.arrayContaining(['companies.invalid_id', 'companies.not_found']));
    expect(op('webhooks-create')['x-error-codes']).toEqual(expect.arrayContaining(['webhooks.url_required', 'webhooks.invalid_url', 'webhooks.events_required', 'webhooks.invalid_events']));
    expect(op('companies-get').responses['409']).toBeUndefined();
  });

  it('offers Idempotency-Key on the operations declared idempotent, and only there', () => {
    for (const entry of operations) {
      const names = (op(entry.name).parameters ?? []).filter((p) => p.in === 'header').map((p) => p.name);
      expect(names, entry.name).toEqual(entry.idempotent ? ['Idempotency-Key'] : []);
    }
    // Every create, batch create and batch upsert, erasures-create included; not api-keys-create, which ignores the key.
    const offered = operations.filter((o) => op(o.name).parameters?.some((p) => p.name === 'Idempotency-Key')).map((o) => o.name);
    expect(offered).toEqual(expect.arrayContaining(['contacts-create', 'contacts-batch-create', 'contacts-batch-upsert', 'erasures-create', 'imports-create', 'exports-create', 'webhooks-create', 'custom-fields-create']));
    expect(offered).not.toContain('api-keys-create');
  });

  it('has the Bearer scheme and the webhook payloads with their Standard Webhooks headers', () => {
    expect(doc.security).toEqual([{ bearerAuth: [] }]);
    expect(doc.components.securitySchemes).toMatchObject({ bearerAuth: { type: 'http', scheme: 'bearer' } });
    // Every subscribable event (the interface's twelve, §15's four `*.restored` and two `*.merged`, §18's `contact.erased`, §19's `project.stage_changed`) and webhooks-test's event have a documented payload.
    expect(Object.keys(doc.webhooks).sort()).toEqual([...WEBHOOK_EVENTS, 'webhook.test'].sort());
    expect(WEBHOOK_EVENTS).toHaveLength(20);
    const updated = doc.components.schemas.ProjectUpdatedEvent as { properties: Record<string, unknown> };
    expect(Object.keys(updated.properties)).toEqual(['id', 'event', 'timestamp', 'record_id', 'data', 'actor', 'previous_attributes']);
    const hook = (doc.webhooks['contact.updated'] as { post: { parameters: { name: string; in: string; required: boolean }[] } }).post;
    expect(hook.parameters.map((p) => [p.name, p.in, p.required])).toEqual([
      ['webhook-id', 'header', true],
      ['webhook-timestamp', 'header', true],
      ['webhook-signature', 'header', true],
    ]);
  });

  it('takes request bodies from the handlers\' schemas (strict, with their limits)', () => {
    const s = doc.components.schemas;
    expect(s.ContactCreateInput).toMatchObject({ type: 'object', required: ['first_name'], additionalProperties: false });
    expect(s.ContactUpdateInput).toMatchObject({ required: ['id'], additionalProperties: false });
    expect(s.ContactListInput).toMatchObject({ properties: { limit: { type: 'integer', minimum: 1, maximum: 100 } } });
    expect(s.CompanyCreateInput).toMatchObject({ required: ['name'], properties: { notes: { maxLength: 10000 } } });
  });

  it('its response schemas reject what the contract forbids', () => {
    const check = responseValidator(doc);
    expect(check('contacts-delete', 200, { ok: true, result: { deleted: true } })).toEqual([]);
    expect(check('contacts-delete', 200, { ok: true, result: { deleted: false } })).not.toEqual([]);
    expect(check('contacts-get', 404, { ok: false, error: { code: 'contacts.not_found', message: 'contact not found' } })).toEqual([]);
    expect(check('contacts-get', 404, { ok: false, error: { code: 'companies.not_found', message: 'x' } })).not.toEqual([]);
    expect(check('contacts-get', 418, { ok: false, error: { code: 'contacts.not_found', message: 'x' } })).not.toEqual([]);
  });
});
