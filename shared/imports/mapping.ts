/**
 * From CSV rows to record bodies (contract §10), pure: headers mapped to the create fields of
 * the entity (compared without case, spaces, `-` and `_`), `tags` split on `;`, a contact's
 * `company_domain`, `custom:<definition name>` columns converted to their definition's type.
 */
import * as v from 'valibot';
import { type CustomFieldDefinition, valueSchema } from '../domain/custom-fields.js';
import { customField, type EntityDefinition, settable, tagsField } from '../schemas/entities/index.js';
import type { RowErrorCode } from '../schemas/imports.js';

export type ColumnTarget = { kind: 'field'; field: string } | { kind: 'company_domain' } | { kind: 'custom'; definition: CustomFieldDefinition };

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

/** Maps a header row; `definitions` are the account's custom fields of the entity. */
export function mapHeaders(def: EntityDefinition, headers: string[], definitions: CustomFieldDefinition[]): HeaderMapping {
  const cf = customField(def);
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
    if (custom && cf) {
      const d = byName.get(custom[1]!.trim().toLowerCase());
      if (d) [target, slot] = [{ kind: 'custom', definition: d }, `custom:${d.id}`];
    } else {
      const n = normalizeHeader(header);
      const field = fields.get(n);
      if (field) [target, slot] = [{ kind: 'field', field }, field];
      else if (n === 'companydomain' && def.type === 'contact') [target, slot] = [{ kind: 'company_domain' }, 'company_domain'];
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
  for (const col of mapping.columns) {
    const cell = (cells[col.index] ?? '').trim();
    if (cell === '') continue;
    const t = col.target;
    if (t.kind === 'company_domain') companyDomain = cell;
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
  return { body, companyDomain, headerOf, cellOf };
}

/** A cell as shown in a row error (at most 500 characters). */
export const shownValue = (cell: string) => (cell.length > 500 ? `${cell.slice(0, 497)}...` : cell);
