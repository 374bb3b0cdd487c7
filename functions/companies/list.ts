import { listCompanies } from '../../shared/domain/companies.js';
import { operation } from '../../shared/http/operation.js';
import { parseWith } from '../../shared/schemas/common.js';
import { companyListInput } from '../../shared/schemas/records.js';

export const handler = operation({
  name: 'companies-list',
  family: 'companies',
  parse: (body) => parseWith('companies', companyListInput, body),
  run: (input, ctx) => listCompanies(ctx, input),
});
