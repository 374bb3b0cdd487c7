import { deleteCompany } from '../../shared/domain/companies.js';
import { operation } from '../../shared/http/operation.js';
import { parseIdOnly } from '../../shared/schemas/common.js';

export const handler = operation({
  name: 'companies-delete',
  family: 'companies',
  parse: (body) => parseIdOnly('companies', body),
  run: ({ id }, ctx) => deleteCompany(ctx, id),
});
