/**
 * Admin command: issue and revoke access tokens in the table it is pointed at.
 *
 *   npm run token -- create --account <uuid> --user <uuid> [--table crm] [--endpoint http://127.0.0.1:8000]
 *   npm run token -- revoke <token-or-sha256-hash> [--table crm] [--endpoint …]
 *
 * Without --endpoint it talks to AWS with the usual credential chain (AWS_PROFILE, AWS_REGION…).
 * The table stores only the token's SHA-256 hash; the token is printed once, here.
 */
import { parseArgs } from 'node:util';
import { issueToken, revokeToken } from '../shared/auth/tokens.js';
import { isUuid } from '../shared/schemas/common.js';

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: {
    account: { type: 'string' },
    user: { type: 'string' },
    table: { type: 'string' },
    endpoint: { type: 'string' },
  },
});

function usage(message?: string): never {
  if (message) console.error(message);
  console.error('usage: npm run token -- create --account <uuid> --user <uuid> [--table NAME] [--endpoint URL]\n       npm run token -- revoke <token-or-hash> [--table NAME] [--endpoint URL]');
  process.exit(2);
}

if (values.table) process.env.TABLE_NAME = values.table;
process.env.TABLE_NAME ??= 'crm';
if (values.endpoint) {
  process.env.DYNAMODB_ENDPOINT = values.endpoint;
  process.env.AWS_REGION ??= 'us-east-1';
  process.env.AWS_ACCESS_KEY_ID ??= 'local';
  process.env.AWS_SECRET_ACCESS_KEY ??= 'local';
}

const [command, arg] = positionals;
if (command === 'create') {
  if (!isUuid(values.account) || !isUuid(values.user)) usage('--account and --user must be UUIDs');
  const token = await issueToken({ accountId: values.account.toLowerCase(), userId: values.user.toLowerCase() });
  console.log(token);
} else if (command === 'revoke') {
  if (!arg) usage('revoke needs the token or its hash');
  const revoked = await revokeToken(arg);
  console.log(revoked ? 'revoked' : 'no such token');
  process.exit(revoked ? 0 : 1);
} else {
  usage();
}
