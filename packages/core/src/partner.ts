import type { ErrorDetail } from "./errors.js";

/**
 * Partner slugs appear in URLs, logs and reports: 3..64 lowercase letters, digits and hyphens,
 * starting and ending with a letter or digit (a DNS label's shape, so it can name a subdomain).
 */
export const SLUG_PATTERN = /^[a-z0-9][a-z0-9-]{1,62}[a-z0-9]$/;
export const PARTNER_NAME_MAX_LENGTH = 200;
/** A pragmatic address check (what mail providers accept), not RFC 5322 in full. */
export const EMAIL_PATTERN =
  /^[A-Za-z0-9._%+'-]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)+$/;
export const EMAIL_MAX_LENGTH = 254;

export interface PartnerInput {
  slug: string;
  name: string;
  contactEmail?: string | null;
}

/** Every rule a new partner breaks, located by field; empty when the input is acceptable. */
export function partnerInputProblems(input: PartnerInput): ErrorDetail[] {
  const problems: ErrorDetail[] = [];
  if (!SLUG_PATTERN.test(input.slug)) {
    problems.push({
      path: "slug",
      message: "3..64 lowercase letters, digits and hyphens, starting and ending with a letter or digit",
    });
  }
  const name = input.name.trim();
  if (name.length === 0 || name.length > PARTNER_NAME_MAX_LENGTH) {
    problems.push({ path: "name", message: `1..${PARTNER_NAME_MAX_LENGTH} characters, not only spaces` });
  }
  const email = input.contactEmail;
  if (email !== undefined && email !== null && (email.length > EMAIL_MAX_LENGTH || !EMAIL_PATTERN.test(email))) {
    problems.push({ path: "contactEmail", message: "must be an email address" });
  }
  return problems;
}

/**
 * The most one spin of a partner's games may stake or pay, in micro-USD, unless the operator sets
 * another (`spinCeilingUsd`): 1,000,000 USD. A game's maxWagerUsd, and maxWagerUsd × its sheet's
 * largest multiplier, must stay within it (docs/operators.md).
 */
export const DEFAULT_SPIN_CEILING_MICROS = 1_000_000_000_000;

/** The partner's spin ceiling in force (null: the default). */
export function spinCeilingOf(partner: { spinCeilingMicros: number | null }): number {
  return partner.spinCeilingMicros ?? DEFAULT_SPIN_CEILING_MICROS;
}
