import { createCompany, companyBody } from '../../shared/domain/companies.js';
import { operation } from '../../shared/http/operation.js';
import { parseRecordBody } from '../../shared/schemas/record-body.js';

export const handler = operation({
  name: 'companies-create',
  family: 'companies',
  parse: (body) => parseRecordBody(companyBody, body, 'create'),
  run: (input, ctx) => createCompany(ctx, input),
});
