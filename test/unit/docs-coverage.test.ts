/**
 * The documentation a newcomer reads first follows the registry: every operation of
 * functions/operations.ts is in the README's operations table and is a method of the client,
 * every client family is named in docs/api.md, and the docs do not link to files a clone lacks.
 * What the docs name exists: operations, families, files, links and their sections, npm scripts;
 * and they describe the product as it is, not the history of its making.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createClient } from '../../client/index.js';
import { operations } from '../../functions/operations.js';
import packageJson from '../../package.json' with { type: 'json' };

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

  it('lists in docs/api.md exactly the operations that honour Idempotency-Key: those declared idempotent', () => {
    const api = read('docs/api.md');
    const start = api.indexOf('## Idempotent creates');
    expect(start, 'docs/api.md has its Idempotent creates section').toBeGreaterThan(0);
    const section = api.slice(start, api.indexOf('\n## ', start + 5));
    // The section's bullet list names them; nothing else of the section is a bullet.
    const listed = section.split('\n').filter((line) => line.startsWith('- ')).flatMap((line) => [...line.matchAll(/`([a-z-]+)`/g)].map((m) => m[1]!));
    expect(listed.length).toBe(new Set(listed).size);
    expect(listed.filter((name) => !operations.some((o) => o.name === name))).toEqual([]);
    expect(listed.sort()).toEqual(operations.filter((o) => o.idempotent).map((o) => o.name).sort());
    expect(listed).not.toContain('api-keys-create');
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

/** README.md and every docs/*.md, with their text. */
const DOCS = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`)].map((file) => ({ file, text: read(file) }));
/** Every `code span` of a text. */
const spans = (text: string) => [...text.matchAll(/`([^`\n]+)`/g)].map((m) => m[1]!);
const OPERATION_NAMES = new Set(operations.map((o) => o.name));
const PREFIXES = [...new Set(operations.map((o) => prefixOf(o.family)))];
/** A repository path without placeholders (`<family>`, `*`, `{id}`), relative to the root. */
const REPO_PATH = /^(?:\.\/)?((?:shared|functions|lib|local|scripts|bench|test|client|docs|bin|\.ci)\/[A-Za-z0-9_./-]*)$/;
const PLAIN_PATH = /(?<![\w/.-])((?:shared|functions|lib|local|scripts|bench|test|client|bin)\/[A-Za-z0-9_/-]+\.(?:ts|mjs|cjs|json|md))\b/g;

/** GitHub's anchor of a heading: lowercase, punctuation dropped, spaces to hyphens. */
const slug = (heading: string) => heading.trim().toLowerCase().replace(/[^\p{L}\p{N} _-]/gu, '').replace(/ /g, '-');
const anchorsOf = (text: string) => new Set([...text.matchAll(/^#{1,6} (.+)$/gm)].map((m) => slug(m[1]!.replace(/`/g, ''))));

describe('what the docs name exists', () => {
  it('reads README.md and every file of docs/', () => {
    expect(DOCS.map((d) => d.file)).toEqual(expect.arrayContaining(['README.md', 'docs/api.md', 'docs/architecture.md', 'docs/data-model.md', 'docs/performance.md']));
  });

  it('names only operations of the registry', () => {
    const unknown = DOCS.flatMap(({ file, text }) =>
      spans(text)
        .filter((s) => /^[a-z]+(?:-[a-z]+)+$/.test(s) && PREFIXES.some((p) => s.startsWith(`${p}-`)) && !OPERATION_NAMES.has(s))
        .map((s) => `${file}: ${s}`),
    );
    expect(unknown).toEqual([]);
  });

  it('lists the registry\'s families, all of them, where docs/api.md lists families', () => {
    const api = read('docs/api.md');
    const sentence = /Families are the operation names without their verb: ([^.]+)\./.exec(api)?.[1];
    expect(sentence, 'docs/api.md lists the families').toBeDefined();
    expect(spans(sentence!).sort()).toEqual([...new Set(operations.map((o) => o.family))].sort());
  });

  it('names only client families that exist (`crm.<family>`)', () => {
    const crm = createClient({ baseUrl: 'http://127.0.0.1:1', token: 'x'.repeat(20) }) as unknown as Record<string, unknown>;
    const unknown = DOCS.flatMap(({ file, text }) => [...text.matchAll(/\bcrm\.([a-z][A-Za-z]*)\b/g)].map((m) => m[1]!).filter((f) => f !== 'call' && typeof crm[f] !== 'object').map((f) => `${file}: crm.${f}`));
    expect(unknown).toEqual([]);
  });

  it('names only files and folders of the repository', () => {
    const missing = DOCS.flatMap(({ file, text }) => {
      const named = [...spans(text).map((s) => REPO_PATH.exec(s)?.[1]), ...[...text.matchAll(PLAIN_PATH)].map((m) => m[1])];
      return named.filter((p): p is string => p !== undefined && !/[<>*{}]/.test(p) && !existsSync(join(ROOT, p))).map((p) => `${file}: ${p}`);
    });
    expect([...new Set(missing)]).toEqual([]);
  });

  it('links only to files that exist, and to sections those files have', () => {
    const broken: string[] = [];
    for (const { file, text } of DOCS) {
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/.test(target!)) continue; // http:, https:, mailto:
        const [path, anchor] = target!.split('#') as [string, string | undefined];
        const resolved = path === '' ? file : join(file, '..', path);
        if (!existsSync(join(ROOT, resolved))) {
          broken.push(`${file}: ${target}`);
          continue;
        }
        if (anchor && resolved.endsWith('.md') && !anchorsOf(read(resolved)).has(anchor)) broken.push(`${file}: ${target} (no such section)`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('names only npm scripts that package.json has', () => {
    const scripts = Object.keys(packageJson.scripts);
    const unknown = DOCS.flatMap(({ file, text }) => [...text.matchAll(/\bnpm run ([a-z][a-z0-9:-]*)/g)].map((m) => m[1]!).filter((name) => !scripts.includes(name)).map((name) => `${file}: npm run ${name}`));
    expect([...new Set(unknown)]).toEqual([]);
  });
});

describe('the docs describe the product as it is', () => {
  it('says neither "session" nor "issue": the history of the work lives in git', () => {
    const diary = DOCS.flatMap(({ file, text }) => text.split('\n').flatMap((line, i) => (/\bsessions?\b|\bissues?\b/i.test(line) ? [`${file}:${i + 1}: ${line.trim()}`] : [])));
    expect(diary).toEqual([]);
  });

  it('the check itself: catches a diary line, an unknown operation and a missing path', () => {
    expect(/\bsessions?\b|\bissues?\b/i.test('Measured (quick run, session 3)')).toBe(true);
    expect(/\bsessions?\b|\bissues?\b/i.test('the issue-14 target')).toBe(true);
    expect(/\bsessions?\b|\bissues?\b/i.test('sessionStorage and reissued keys')).toBe(false);
    expect(spans('`contacts-frobnicate` and `contacts-get`').filter((s) => PREFIXES.some((p) => s.startsWith(`${p}-`)) && !OPERATION_NAMES.has(s))).toEqual(['contacts-frobnicate']);
    expect(REPO_PATH.exec('shared/db/nowhere.ts')?.[1]).toBe('shared/db/nowhere.ts');
    expect(existsSync(join(ROOT, 'shared/db/nowhere.ts'))).toBe(false);
    expect([...'see shared/db/table.ts and lib/x/y.md'.matchAll(PLAIN_PATH)].map((m) => m[1])).toEqual(['shared/db/table.ts', 'lib/x/y.md']);
    expect(slug('Mixed load: one account importing, another reading')).toBe('mixed-load-one-account-importing-another-reading');
  });
});
