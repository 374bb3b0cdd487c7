/**
 * A list request's `filter` and `sort` (contract §17), checked against the family's fields (from
 * its definition) and the account's custom-field definitions of its entity type (read only when
 * the request names one). Errors: `<family>.invalid_filter` with a detail per problem and its path,
 * `<family>.invalid_sort`.
 */
import { ApiError, type Family } from '../../errors.js';
import { customField, type EntityDefinition } from '../../schemas/entities/index.js';
import {
  CUSTOM_FIELD_FILTER_TYPES,
  CUSTOM_FIELD_PREFIX,
  entityFilterFields,
  type Filter,
  type FilterField,
  filterFields,
  parseFilter,
  parseSort,
  type Sort,
} from '../../schemas/filter.js';
import { type CustomFieldEntity, listDefinitions } from '../custom-fields.js';

export interface ListQuery {
  filter?: Filter;
  sort?: Sort;
  /** The fields the filter and sort name, with their types. */
  fields: Record<string, FilterField>;
}

const namesCustomField = (x: unknown) => x !== undefined && JSON.stringify(x).includes(`"${CUSTOM_FIELD_PREFIX}`);

/**
 * Checks `filter` and `sort` of a list body (`root`: the filter's path in the request, `filter`,
 * or `filters.filter` in an export's body). Undefined when the body has neither.
 */
export async function resolveQuery(def: EntityDefinition, accountId: string, body: { filter?: unknown; sort?: unknown }, family: Family, root = 'filter'): Promise<ListQuery | undefined> {
  if (body.filter === undefined && body.sort === undefined) return undefined;
  const builtIn = Object.fromEntries(Object.entries(entityFilterFields(def)).map(([name, f]) => [name, def.sorted?.includes(name) ? { ...f, indexed: 'ready' as const } : f]));
  const custom = new Map<string, FilterField>();
  if (customField(def) && (namesCustomField(body.filter) || namesCustomField(body.sort))) {
    for (const d of await listDefinitions(accountId, def.type as CustomFieldEntity)) {
      const indexed = d.index_status === 'building' ? 'building' : d.indexed ? 'ready' : undefined;
      custom.set(`${CUSTOM_FIELD_PREFIX}${d.id}`, { type: CUSTOM_FIELD_FILTER_TYPES[d.field_type], ...(indexed ? { indexed } : {}) });
    }
  }
  const fieldOf = (name: string) => (Object.hasOwn(builtIn, name) ? builtIn[name] : custom.get(name));
  const out: ListQuery = { fields: {} };
  if (body.filter !== undefined) {
    const { filter, errors } = parseFilter(body.filter, fieldOf, root);
    if (errors.length || !filter) throw new ApiError(`${family}.invalid_filter`, `${root} is invalid: ${errors[0]?.path}: ${errors[0]?.message}`, errors);
    out.filter = filter;
  }
  if (body.sort !== undefined) {
    const { sort, error } = parseSort(body.sort, fieldOf);
    const path = root.replace(/filter$/, 'sort');
    if (!sort) throw new ApiError(`${family}.invalid_sort`, error!, [{ path, message: error! }]);
    if (fieldOf(sort.field)?.indexed === 'building') {
      throw new ApiError(`${family}.index_building`, `${sort.field} is being indexed or unindexed (its index_status is building): sort on it once it is ready`, [{ path: `${path}.field`, message: 'index_status is building' }]);
    }
    if (!(sort.field === 'created_at' && sort.direction === 'desc')) out.sort = sort;
  }
  for (const name of [...filterFields(out.filter), ...(out.sort ? [out.sort.field] : [])]) out.fields[name] = fieldOf(name)!;
  return out;
}
