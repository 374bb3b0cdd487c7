/** Keys of the account's members (contract §20). */
import { ACCOUNT, defineKeys, personalFlags } from './define.js';

const MEMBERS = `${ACCOUNT}#mb`;

export const MEMBER_KEYS = defineKeys({
  /** A member (its API fields and `ver`), in the account's members partition (at most 1,000). */
  member: [MEMBERS, '{id}'],
  /** The account's members head: `count` (at most 1,000), moved in each create's transaction. */
  memberHead: [MEMBERS, 'H'],
  /** The claim of an address (lowercased): `id`, the member holding it; put and moved in the member's transactions. */
  memberEmail: [MEMBERS, 'e#{email}'],
  /**
   * A member's name-ordered entry (a copy of the member), one partition per status, sort key
   * the folded name then the id (`at`): members-list reads in proportion to its page.
   */
  memberByName: [`${MEMBERS}#{status}`, '{at}'],
});

/**
 * A member's email and name are a person's data, but not a contact's: the erasure of a contact
 * (contract §18) never reaches a member, and none of these items holds a contact's data.
 */
export const MEMBER_PERSONAL = /* @__PURE__ */ personalFlags(MEMBER_KEYS, { member: false, memberHead: false, memberEmail: false, memberByName: false });
