import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { bearerToken, newToken, resolveToken, saveToken } from '../shared/auth/tokens.js';
import type { AuthContext } from '../shared/http/operation.js';

/** Where `npm start` keeps the default account's dev token when it has a data directory. */
export const devTokenFile = (dataDir: string) => join(dataDir, 'dev-token');

/**
 * The default account's dev token. In memory (no data directory): a new one per start. With a
 * data directory the token is kept in `<dataDir>/dev-token` (mode 0600; the table stores only its
 * hash, as for every key), so every restart prints the same token; if it was revoked meanwhile,
 * a new one replaces it.
 */
export async function defaultDevToken(auth: AuthContext, dataDir: string | undefined): Promise<string> {
  const file = dataDir ? devTokenFile(dataDir) : undefined;
  const kept = file && existsSync(file) ? readFileSync(file, 'utf8').trim() : undefined;
  if (kept && bearerToken(`Bearer ${kept}`)) {
    await saveToken(kept, auth);
    const owner = await resolveToken(kept);
    if (owner && owner.accountId === auth.accountId) return kept;
  }
  const token = newToken();
  await saveToken(token, auth);
  if (file) {
    writeFileSync(file, `${token}\n`, { mode: 0o600 });
    chmodSync(file, 0o600);
  }
  return token;
}
