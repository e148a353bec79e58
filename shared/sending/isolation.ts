/**
 * The sending isolation of an organization: one SES tenant (and a
 * configuration set of the same name) per organization, with the
 * organization's domain identities associated. Reputation, sending status
 * and suppression are then the organization's own.
 */

/** The tenant (and configuration set) name of an organization. */
export const tenantNameOf = (orgId: string): string => `org-${orgId}`;

/** The custom MAIL FROM domain we set up for a sending domain. */
export const mailFromDomainOf = (domain: string): string => `bounce.${domain}`;
