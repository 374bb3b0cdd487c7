import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsImport from 'ajv-formats';
import { buildOpenApiDocument, type OpenApiDocument } from '../../shared/openapi/document.js';
import { operations } from '../../functions/operations.js';

// ajv-formats is CommonJS: its default export arrives wrapped under ESM.
const addFormats = ((addFormatsImport as unknown as { default?: unknown }).default ?? addFormatsImport) as unknown as (ajv: Ajv2020) => Ajv2020;

type Json = Record<string, unknown>;

/** Every object schema without additionalProperties gets `false`: no undocumented fields allowed. */
export function strict(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(strict);
  if (schema === null || typeof schema !== 'object') return schema;
  const out: Json = Object.fromEntries(Object.entries(schema).map(([k, v]) => [k, k === 'properties' ? Object.fromEntries(Object.entries(v as Json).map(([p, s]) => [p, strict(s)])) : strict(v)]));
  if (out.type === 'object' && out.properties && !('additionalProperties' in out)) out.additionalProperties = false;
  return out;
}

/**
 * Validates real responses against the document: the schema documented for that operation and
 * HTTP status (an undocumented status fails), with the component schemas made strict.
 */
export function responseValidator(doc: OpenApiDocument = buildOpenApiDocument(operations)) {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  const components = strict(doc.components.schemas);
  const cache = new Map<string, ValidateFunction>();
  return (operation: string, status: number, body: unknown): string[] => {
    const responses = doc.paths[`/api/${operation}`]?.post.responses as Record<string, { content: { 'application/json': { schema: Json } } }> | undefined;
    if (!responses) return [`operation ${operation} is not documented`];
    const response = responses[String(status)];
    if (!response) return [`status ${status} is not documented for ${operation} (documented: ${Object.keys(responses).join(', ')})`];
    const key = `${operation}:${status}`;
    let validate = cache.get(key);
    if (!validate) {
      validate = ajv.compile({ ...(strict(response.content['application/json'].schema) as Json), components: { schemas: components } });
      cache.set(key, validate);
    }
    return validate(body) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message} ${JSON.stringify(e.params)}`);
  };
}
