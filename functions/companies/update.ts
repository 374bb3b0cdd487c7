import { updateCompany, companyBody } from '../../shared/domain/companies.js';
import { operation } from '../../shared/http/operation.js';
import { parseRecordBody } from '../../shared/schemas/record-body.js';

export const handler = operation({
  name: 'companies-update',
  family: 'companies',
  parse: (body) => parseRecordBody(companyBody, body, 'update'),
  run: (input, ctx) => updateCompany(ctx, input),
});
