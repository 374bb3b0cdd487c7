/**
 * The generated OpenAPI document passes Spectral's and Redocly's recommended rulesets with no
 * error and no warning (issue: a warning-free reference page, clients generated without casts).
 */
import { createConfig, lintFromString } from '@redocly/openapi-core';
import core from '@stoplight/spectral-core';
import Parsers from '@stoplight/spectral-parsers';
import rulesets from '@stoplight/spectral-rulesets';
import { describe, expect, it } from 'vitest';
import { operations } from '../../functions/operations.js';
import { buildOpenApiDocument } from '../../shared/openapi/document.js';

const text = JSON.stringify(buildOpenApiDocument(operations), null, 2);

describe('OpenAPI document lint', () => {
  it("Spectral's recommended OpenAPI ruleset reports nothing", async () => {
    const spectral = new core.Spectral();
    spectral.setRuleset({ extends: [[rulesets.oas as never, 'recommended']] } as never);
    const results = await spectral.run(new core.Document(text, Parsers.Json, 'openapi.json'));
    expect(results.map((r) => `${r.code} ${r.message} at ${r.path.join('.')}`)).toEqual([]);
  }, 60_000);

  it("Redocly's recommended ruleset reports nothing", async () => {
    const config = await createConfig({ extends: ['recommended'] });
    const problems = await lintFromString({ source: text, absoluteRef: '/openapi.json', config } as never);
    expect(problems.map((p) => `${p.ruleId} ${p.message} at ${p.location?.[0]?.pointer}`)).toEqual([]);
  }, 60_000);

  it('declares no jsonSchemaDialect (the reference UI warns on it) and describes every operation, field and tag', () => {
    const doc = JSON.parse(text) as Record<string, unknown> & { paths: Record<string, { post: { description?: string } }>; tags: { description?: string }[]; components: { schemas: Record<string, { properties?: Record<string, { description?: string; $ref?: string }> }> } };
    expect(doc).not.toHaveProperty('jsonSchemaDialect');
    for (const [path, item] of Object.entries(doc.paths)) expect(item.post.description, path).toBeTruthy();
    for (const tag of doc.tags) expect(tag.description).toBeTruthy();
    const entityComponents = ['Contact', 'Company', 'Project', 'Activity', 'Source'].flatMap((n) => [n, `${n}CreateInput`, `${n}UpdateInput`, `${n}ListInput`]);
    for (const name of [...entityComponents, 'CustomField', 'CustomFieldCreateInput', 'CustomFieldUpdateInput', 'CustomFieldListInput', 'IdInput']) {
      for (const [field, schema] of Object.entries(doc.components.schemas[name]!.properties!)) expect(schema.description, `${name}.${field}`).toBeTruthy();
    }
  });
});
