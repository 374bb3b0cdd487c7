/**
 * The documentation a newcomer reads first follows the registry: every operation of
 * functions/operations.ts is in the README's operations table and is a method of the client,
 * every client family is named in docs/api.md, and the docs do not link to files a clone lacks.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createClient } from '../../client/index.js';
import { operations } from '../../functions/operations.js';

const ROOT = join(import.meta.dirname, '..', '..');
const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');
const prefixOf = (family: string) => family.replace(/_/g, '-');
const camel = (s: string) => s.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());

/** The operations the README's "## Operations" table names (`contacts-create`, `-get`, … expanded). */
function readmeTableOperations(): Set<string> {
  const readme = read('README.md');
  const section = readme.slice(readme.indexOf('## Operations'), readme.indexOf('\n## ', readme.indexOf('## Operations') + 5));
  const names = new Set<string>();
  for (const row of section.split('\n').filter((l) => l.startsWith('| ') && !l.startsWith('| family') && !l.startsWith('|---'))) {
    const cell = row.split('|')[2] ?? '';
    let prefix = '';
    for (const [, token] of cell.matchAll(/`([a-z-]+)`/g)) {
      if (token!.startsWith('-')) {
        names.add(`${prefix}${token}`);
      } else {
        names.add(token!);
        const op = operations.find((o) => o.name === token);
        if (op) prefix = prefixOf(op.family);
      }
    }
  }
  return names;
}

describe('documentation coverage of the registry', () => {
  it('names every operation in the README table', () => {
    const table = readmeTableOperations();
    expect(operations.map((o) => o.name).filter((name) => !table.has(name))).toEqual([]);
  });

  it('has a client method for every operation', () => {
    const crm = createClient({ baseUrl: 'http://127.0.0.1:1', token: 'x'.repeat(20) }) as unknown as Record<string, Record<string, unknown>>;
    const missing = operations.filter((o) => {
      const prefix = prefixOf(o.family);
      return typeof crm[camel(prefix)]?.[camel(o.name.slice(prefix.length + 1))] !== 'function';
    });
    expect(missing.map((o) => o.name)).toEqual([]);
  });

  it('lists every client family in docs/api.md and every family in the README summary line', () => {
    const api = read('docs/api.md');
    const families = [...new Set(operations.map((o) => camel(prefixOf(o.family))))];
    expect(families.filter((f) => !api.includes(`\`crm.${f}\``))).toEqual([]);
    const readme = read('README.md');
    const summary = /^Operations: (.+?)\n\n/ms.exec(readme)?.[1] ?? '';
    expect([...new Set(operations.map((o) => prefixOf(o.family)))].filter((p) => !summary.includes(`\`${p}-`))).toEqual([]);
  });

  it('does not link to the spec folder (a clone does not have it) nor count functions by hand', () => {
    for (const file of ['README.md', 'docs/api.md', 'docs/webhooks.md', 'docs/deploy.md', 'docs/imports.md', 'docs/inbound-email.md', 'docs/architecture.md', 'docs/data-model.md', 'docs/performance.md']) {
      expect(read(file), file).not.toMatch(/spec\/contract\.md|spec\/interface\.md/);
    }
    expect(read('docs/deploy.md')).not.toMatch(/about 30/);
    expect(read('docs/webhooks.md')).not.toMatch(/every change of\s+a contact or company/);
  });
});
