/** Keys of API keys, their tokens and the account's rate limit (contract §14). */
import { ACCOUNT, defineKeys, ORDER, personalFlags } from './define.js';

const KEYS = `${ACCOUNT}#key`;

export const API_KEY_KEYS = defineKeys({
  /** An API key's record (what api-keys-get shows); its token item is `token(hash)`. */
  apiKey: [`${KEYS}#{id}`, 'KEY'],
  /** GSI1 attributes of a key: the account's keys, newest first. */
  apiKeyGsi: { gsi1: [KEYS, ORDER] },
  apiKeyListPartition: KEYS,
  /** Access tokens, by SHA-256 hash only. */
  token: ['TOKEN#{hash}', 'TOKEN'],
  /** The account's rate-limit bucket: one small item, updated once per request (GCRA). */
  rateLimit: [`${ACCOUNT}#rl`, 'RL'],
});

export const API_KEY_PERSONAL = /* @__PURE__ */ personalFlags(API_KEY_KEYS, { apiKey: false, token: false, rateLimit: false });
