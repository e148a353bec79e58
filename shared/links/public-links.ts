/**
 * The public links of emails: their purposes, lifetimes and URLs. Each link
 * carries a signed token naming its purpose, so a link of one kind cannot be
 * replayed as another.
 */

/** Purposes of signed public links. */
export const LINK_PURPOSES = {
  confirm: 'confirm',
  unsubscribe: 'unsubscribe',
  topicOptOut: 'topic-opt-out',
} as const;

/** Paths of the public pages, below the API's base URL. */
export const LINK_PATHS = {
  confirm: '/public/confirm',
  unsubscribe: '/public/unsubscribe',
  topicOptOut: '/public/topic-opt-out',
} as const;

/** A confirmation link works for a week. */
export const CONFIRMATION_TTL_SECONDS = 7 * 24 * 3600;

/**
 * Unsubscribe and topic opt-out links work for a year: far beyond the 30
 * days the US CAN-SPAM act requires of an unsubscribe link.
 */
export const MESSAGE_LINK_TTL_SECONDS = 365 * 24 * 3600;

/** The URL of a public page for a token. */
export const publicLinkUrl = (
  publicApiUrl: string,
  kind: keyof typeof LINK_PATHS,
  token: string,
): string =>
  `${publicApiUrl}${LINK_PATHS[kind]}?token=${encodeURIComponent(token)}`;

/**
 * The link a click counts for: its URL, less the per-recipient token of our
 * own unsubscribe and topic opt-out links, so that every recipient's click
 * on one of them counts for one link (and its token is not stored).
 */
export const clickedLink = (url: string): string => {
  if (!URL.canParse(url)) return url;
  const link = new URL(url);
  const ours = [LINK_PATHS.unsubscribe, LINK_PATHS.topicOptOut].some((path) =>
    link.pathname.endsWith(path),
  );
  if (!ours || !link.searchParams.has('token')) return url;
  link.searchParams.delete('token');
  return link.toString();
};
