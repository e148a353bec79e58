import { inject } from 'vitest';

/** An email as the SES v2 emulator stores it. */
export interface StoredEmail {
  messageId: string;
  from: string;
  destination: { to: string[] };
  replyTo?: string[];
  subject: string;
  body: { html?: string; text?: string };
  headers?: { name: string; value: string }[];
}

/** Every email the mailbox at `url` holds for `address`, oldest first. */
export const mailTo = async (
  address: string,
  url: string = inject('mailboxUrl'),
): Promise<StoredEmail[]> => {
  const response = await fetch(`${url}/store`);
  const { emails } = (await response.json()) as { emails: StoredEmail[] };
  return emails.filter((email) => email.destination.to.includes(address));
};

/** The confirmation link of an email's HTML (the `href` of the button). */
export const confirmationLinkOf = (email: StoredEmail | undefined): string => {
  if (!email) throw new Error('no email where a confirmation was expected');
  const match = /href="([^"]*\/public\/confirm\?token=[^"]+)"/.exec(
    email.body.html ?? '',
  );
  if (!match?.[1]) throw new Error('no confirmation link in the email');
  // The HTML escapes & as &amp;.
  return match[1].replaceAll('&amp;', '&');
};

/** The token of a confirmation link. */
export const tokenOf = (link: string): string =>
  new URL(link).searchParams.get('token') ?? '';
