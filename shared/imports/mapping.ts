/**
 * The CSV columns of a record family, both ways (contract §10 and §16), pure: one module defines them.
 *
 * - Import: headers mapped to the create fields of the entity (compared without case, spaces,
 *   `-` and `_`), `tags` split on `;`, a contact's `company_domain`, a member by email for each
 *   member reference (`owner_email` for `owner_id`, `assignee_email` for `assignee_id`),
 *   `custom:<definition name>` columns converted to their definition's type; the export-only
 *   columns `id`, `created_at`, `updated_at` and the members' names (`owner_name`) are accepted
 *   and ignored; a cell's formula-injection prefix `'` is stripped.
 * - Export: the same headers in the same spelling (`exportColumns`), cells from a record
 *   (`recordCells`), a cell that a spreadsheet would run as a formula prefixed with `'`.
 */
import * as v from 'valibot';
import { type CustomFieldDefinition, valueSchema } from '../domain/custom-fields.js';
import { customField, type EntityDefinition, refFields, settable, tagsField } from '../schemas/entities/index.js';
import type { RowErrorCode } from '../schemas/imports.js';

export type ColumnTarget =
  | { kind: 'field'; field: string }
  | { kind: 'company_domain' }
  /** A member by email (case-insensitively) for the member reference `field` (contract §20: `owner_email` → `owner_id`). */
  | { kind: 'member_email'; field: string }
  | { kind: 'custom'; definition: CustomFieldDefinition };

export interface Column {
  index: number;
  header: string;
  target: ColumnTarget;
}

export interface HeaderMapping {
  columns: Column[];
  /** Headers that map to nothing (or to a field an earlier column already fills). */
  unmapped: string[];
  width: number;
  /** The column holding the upsert / duplicate key (contacts: email, companies: domain), if any. */
  keyColumn?: Column;
}

export const normalizeHeader = (h: string) => h.trim().toLowerCase().replace(/[\s\-_]+/g, '');

/** Columns an export adds after the record's fields; an import accepts and ignores them (not even listed as unmapped). */
export const EXPORT_ONLY_COLUMNS = ['id', 'created_at', 'updated_at'] as const;
const EXPORT_ONLY = new Set<string>(EXPORT_ONLY_COLUMNS.map(normalizeHeader));

/**
 * Formula injection (contract §16): a cell that begins with `=`, `+`, `-`, `@`, a tab or a
 * carriage return is written with a leading `'`, and the import strips exactly that one `'`.
 * A value that itself begins with `'` before such a character gets one more `'`, so every value
 * survives the round trip unchanged (`'=x` → `''=x` → `'=x`).
 */
const FORMULA_START = /^'*[=+\-@\t\r]/;
export const escapeFormula = (cell: string): string => (FORMULA_START.test(cell) ? `'${cell}` : cell);
export const unescapeFormula = (cell: string): string => (cell.startsWith("'") && FORMULA_START.test(cell.slice(1)) ? cell.slice(1) : cell);

/** The member references of an entity (`owner_id`, `assignee_id`), with their email column (`owner_email`) and name field (`owner_name`). */
export const memberRefs = (def: EntityDefinition) =>
  refFields(def)
    .filter((r) => r.target === 'member')
    .map((r) => ({ field: r.field, emailHeader: `${r.field.replace(/_id$/, '')}_email`, nameField: r.nameField }));

/** Maps a header row; `definitions` are the account's custom fields of the entity. */
export function mapHeaders(def: EntityDefinition, headers: string[], definitions: CustomFieldDefinition[]): HeaderMapping {
  const cf = customField(def);
  const members = memberRefs(def);
  // An export's member names (`owner_name`): accepted and ignored, as the export-only columns.
  const names = new Set(members.flatMap((m) => (m.nameField ? [normalizeHeader(m.nameField)] : [])));
  const fields = new Map(settable(def, 'create').filter((f) => f !== cf).map((f) => [normalizeHeader(f), f]));
  const byName = new Map<string, CustomFieldDefinition>();
  for (const d of definitions) if (!byName.has(d.name.trim().toLowerCase())) byName.set(d.name.trim().toLowerCase(), d);
  const used = new Set<string>();
  const columns: Column[] = [];
  const unmapped: string[] = [];
  headers.forEach((header, index) => {
    const custom = /^\s*custom\s*:(.*)$/i.exec(header);
    let target: ColumnTarget | undefined;
    let slot = '';
    if (EXPORT_ONLY.has(normalizeHeader(header)) || names.has(normalizeHeader(header))) return;
    if (custom && cf) {
      const d = byName.get(custom[1]!.trim().toLowerCase());
      if (d) [target, slot] = [{ kind: 'custom', definition: d }, `custom:${d.id}`];
    } else {
      const n = normalizeHeader(header);
      const field = fields.get(n);
      if (field) [target, slot] = [{ kind: 'field', field }, field];
      else if (n === 'companydomain' && def.type === 'contact') [target, slot] = [{ kind: 'company_domain' }, 'company_domain'];
      else {
        const member = members.find((m) => normalizeHeader(m.emailHeader) === n);
        if (member) [target, slot] = [{ kind: 'member_email', field: member.field }, member.emailHeader];
      }
    }
    if (!target || used.has(slot)) {
      unmapped.push(header);
      return;
    }
    used.add(slot);
    columns.push({ index, header, target });
  });
  const keyField = def.lookup?.field;
  const keyColumn = columns.find((c) => c.target.kind === 'field' && c.target.field === keyField);
  return { columns, unmapped, width: headers.length, keyColumn };
}

export interface RowProblem {
  code: RowErrorCode;
  column: string;
  message: string;
  value: string;
}

export interface MappedRow {
  /** Body fields from the row's non-empty cells (custom values keyed by definition id under the custom field). */
  body: Record<string, unknown>;
  /** The `company_domain` cell (contacts), trimmed. */
  companyDomain?: string;
  /** The member email cells (`owner_email`), trimmed, by the reference field they set (`owner_id`). */
  memberEmails?: Map<string, { email: string; header: string }>;
  /** Header of each body field (and `custom_fields.<id>`), for error messages. */
  headerOf: Map<string, string>;
  /** Cell of each body field, for error messages. */
  cellOf: Map<string, string>;
}

const TRUE = ['true', 'yes', 'y', '1'];
const FALSE = ['false', 'no', 'n', '0'];
const NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/** A custom-field cell as its definition's type, or a problem. */
function customValue(d: CustomFieldDefinition, cell: string): { value: unknown } | { problem: string } {
  let value: unknown = cell;
  if (d.field_type === 'number' && NUMBER.test(cell)) value = Number(cell);
  else if (d.field_type === 'boolean' && TRUE.includes(cell.toLowerCase())) value = true;
  else if (d.field_type === 'boolean' && FALSE.includes(cell.toLowerCase())) value = false;
  else if (d.field_type === 'multi_select') value = cell.split(';').map((s) => s.trim()).filter(Boolean);
  const out = v.safeParse(valueSchema(d), value);
  return out.success ? { value: out.output } : { problem: out.issues[0]?.message ?? 'invalid value' };
}

/**
 * A plain field's cell as the value its rule takes: the string itself when the rule accepts a
 * string, else a number when the cell is numeric (counts), else the string (the rule reports it).
 */
function fieldValue(def: EntityDefinition, field: string, cell: string): unknown {
  if (field === tagsField(def)) return cell.split(';').map((s) => s.trim()).filter(Boolean);
  const input = def.fields[field]?.input;
  if (!input || v.is(input, cell)) return cell;
  if (NUMBER.test(cell) && v.is(input, Number(cell))) return Number(cell);
  return cell;
}

/** The row's non-empty cells as a body; custom values checked against their definitions. */
export function mapRow(def: EntityDefinition, mapping: HeaderMapping, cells: string[]): MappedRow | RowProblem {
  const cf = customField(def);
  const body: Record<string, unknown> = {};
  const custom: Record<string, unknown> = {};
  const headerOf = new Map<string, string>();
  const cellOf = new Map<string, string>();
  let companyDomain: string | undefined;
  let memberEmails: MappedRow['memberEmails'];
  for (const col of mapping.columns) {
    const cell = unescapeFormula((cells[col.index] ?? '').trim());
    if (cell === '') continue;
    const t = col.target;
    if (t.kind === 'company_domain') companyDomain = cell;
    else if (t.kind === 'member_email') (memberEmails ??= new Map()).set(t.field, { email: cell, header: col.header });
    else if (t.kind === 'custom') {
      const out = customValue(t.definition, cell);
      if ('problem' in out) return { code: 'invalid_custom_fields', column: col.header, message: `${t.definition.name}: ${out.problem}`, value: cell };
      custom[t.definition.id] = out.value;
      headerOf.set(`${cf}.${t.definition.id}`, col.header);
      cellOf.set(`${cf}.${t.definition.id}`, cell);
    } else {
      body[t.field] = fieldValue(def, t.field, cell);
      headerOf.set(t.field, col.header);
      cellOf.set(t.field, cell);
    }
  }
  if (cf && Object.keys(custom).length) body[cf] = custom;
  return { body, companyDomain, ...(memberEmails ? { memberEmails } : {}), headerOf, cellOf };
}

/** A cell as shown in a row error (at most 500 characters). */
export const shownValue = (cell: string) => (cell.length > 500 ? `${cell.slice(0, 497)}...` : cell);

// --- export (contract §16) ---------------------------------------------------------------------

/** A column of an exported file: its header (the import's spelling) and what fills it. */
export interface ExportColumn {
  header: string;
  target: ColumnTarget | { kind: 'meta'; field: (typeof EXPORT_ONLY_COLUMNS)[number] };
}

/**
 * The columns of an export, in order: every create field of the entity (the import's targets,
 * custom values aside), a contact's `company_domain`, the members' current names (`owner_name`,
 * ignored by an import), `custom:<name>` per definition of the entity's type (oldest first), then
 * `id`, `created_at`, `updated_at`. `mapHeaders` maps every one of them back to the same target.
 */
export function exportColumns(def: EntityDefinition, definitions: CustomFieldDefinition[]): ExportColumn[] {
  const cf = customField(def);
  const columns: ExportColumn[] = settable(def, 'create')
    .filter((f) => f !== cf)
    .map((field) => ({ header: field, target: { kind: 'field', field } }));
  if (def.type === 'contact') columns.push({ header: 'company_domain', target: { kind: 'company_domain' } });
  for (const m of memberRefs(def)) if (m.nameField) columns.push({ header: m.nameField, target: { kind: 'field', field: m.nameField } });
  if (cf) for (const d of [...definitions].reverse()) columns.push({ header: `custom:${d.name}`, target: { kind: 'custom', definition: d } });
  for (const field of EXPORT_ONLY_COLUMNS) columns.push({ header: field, target: { kind: 'meta', field } });
  return columns;
}

/** A value as its cell: "" for null, arrays (tags, multi-select, id lists) joined with `;`. */
function cellOf(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (Array.isArray(value)) return value.map(cellOf).join(';');
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/**
 * A record's row (formula-escaped), as `exportColumns` orders it. `companyDomain` is the domain
 * of the contact's company ("" when none).
 */
export function recordCells(columns: ExportColumn[], record: Record<string, unknown>, customKey: string | undefined, companyDomain: string): string[] {
  const custom = (customKey ? record[customKey] : undefined) as Record<string, unknown> | undefined;
  return columns.map(({ target }) => {
    if (target.kind === 'company_domain') return escapeFormula(companyDomain);
    if (target.kind === 'member_email') return '';
    if (target.kind === 'custom') return escapeFormula(cellOf(custom?.[target.definition.id]));
    return escapeFormula(cellOf(record[target.field]));
  });
}
