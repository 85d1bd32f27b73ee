/**
 * The release this code is, as numbered in RELEASES.md. Raised when main opens the next release:
 * from then on, features the running previous release cannot read wait for `release finish`
 * (docs/upgrades.md, "Features the previous release cannot read").
 */
export const CURRENT_RELEASE = 2;
