import { createCompany, companyBody } from '../../shared/domain/companies.js';
import { idempotentCreate } from '../../shared/http/idempotency.js';
import { operation } from '../../shared/http/operation.js';
import { parseRecordBody } from '../../shared/schemas/record-body.js';

export const handler = operation({
  name: 'companies-create',
  family: 'companies',
  wrap: idempotentCreate(),
  parse: (body) => parseRecordBody(companyBody, body, 'create'),
  run: (input, ctx) => createCompany(ctx, input),
});
