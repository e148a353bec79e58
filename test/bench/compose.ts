/**
 * `npm run bench:compose`: CPU per mail of the message composer, for a tiny
 * template, a 15 KB newsletter (`test/support/newsletter.ts`) and the same
 * newsletter merging custom fields in its subject and body (the
 * organization's 50 fields read once per batch), each
 * through the per-mail path (`composeMessage` for every mail) and the
 * prepared path (`prepareMessage` once per batch of `MAX_BATCH`
 * recipients, its cost shared by the batch's mails). Links are signed for real (jose, HS256).
 *
 * CPU is the process's (`process.cpuUsage`, user and system: the signing's
 * threads count too), measured over `BENCH_MAILS` mails (2,000) after as
 * many to warm up. Figures, not assertions: see the README's composer
 * section.
 */
import { JoseLinkSigner } from '../../shared/adapters/jose-link-signer.ts';
import { MAX_BATCH } from '../../shared/campaigns/deliver.ts';
import {
  type ComposeInput,
  composeMessage,
  type MailRecipient,
  type MessageContent,
  prepareMessage,
} from '../../shared/mail/compose.ts';
import { fixedClock, TEST_LINK_SECRET } from '../support/dynamo.ts';
import { aField, fieldsInMemory } from '../support/fields.ts';
import { NEWSLETTER_HTML, TINY_HTML } from '../support/newsletter.ts';

const MAILS = Number(process.env.BENCH_MAILS ?? 2_000);

const clock = fixedClock();
const deps = {
  links: new JoseLinkSigner(async () => TEST_LINK_SECRET, clock),
  clock,
  // An organization at the cap: 50 fields, two of which the newsletter reads.
  fields: fieldsInMemory([
    aField({ key: 'company', type: 'text' }),
    aField({
      key: 'plan',
      type: 'option',
      options: ['free', 'pro'],
      defaultValue: 'free',
    }),
    ...Array.from({ length: 48 }, (_, i) =>
      aField({ key: `extra_${i}`, type: 'number', defaultValue: i }),
    ),
  ]),
  endpoints: {
    publicApiUrl: 'https://mail.example.test/api/v1',
    appFromAddress: 'no-reply@example.test',
    pagesUrl: 'https://pages.example.test',
  },
};

const FIRST_NAMES = ['Ann', 'Bo', 'Marie-Christine', '', 'José', 'Li'];

/** Recipients with names and addresses of different lengths. */
const recipient = (i: number): MailRecipient => ({
  id: `01a20000-0000-7000-8000-${String(i).padStart(12, '0')}`,
  email: `reader.${'x'.repeat(i % 11)}${i}@example.test`,
  firstName: FIRST_NAMES[i % FIRST_NAMES.length] ?? '',
  lastName: 'Reader',
  fields: {
    company: `Company ${i} & Sons`,
    ...(i % 2 ? { plan: 'pro' } : {}),
    extra_1: i,
  },
});

/** The newsletter, merging two custom fields in its body and subject. */
const NEWSLETTER_WITH_FIELDS = NEWSLETTER_HTML.replace(
  'Hi {{ firstName }},',
  'Hi {{ firstName }} of {{ fields.company }}, on the {{ fields.plan }} plan,',
);

const contentOf = (html: string, subject: string): MessageContent => ({
  orgId: '01a20000-0000-7000-8000-00000000000a',
  subject,
  html,
  from: 'Acme <news@acme.test>',
  postalAddress: 'Acme Ltd, 1 Main Street, Springfield',
  topicId: '01a20000-0000-7000-8000-00000000000b',
  campaignId: '01a20000-0000-7000-8000-00000000000c',
  tenantName: 'org-acme',
});

/** Milliseconds of CPU per mail for `mails` mails sent by `send`. */
const cpuPerMail = async (
  mails: number,
  send: (from: number, count: number) => Promise<void>,
) => {
  await send(0, mails);
  const start = process.cpuUsage();
  await send(mails, mails);
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000 / mails;
};

/** One mail at a time, each composed from scratch. */
const perMail =
  (content: MessageContent) => async (from: number, n: number) => {
    for (let i = from; i < from + n; i++) {
      const input: ComposeInput = { ...content, contact: recipient(i) };
      await composeMessage(deps, input);
    }
  };

/** Batches of `MAX_BATCH`: prepared once, composed for each recipient. */
const prepared =
  (content: MessageContent) => async (from: number, n: number) => {
    for (let start = from; start < from + n; start += MAX_BATCH) {
      const compose = await prepareMessage(deps, content);
      const end = Math.min(start + MAX_BATCH, from + n);
      for (let i = start; i < end; i++) await compose(recipient(i));
    }
  };

const rows: [string, number, number][] = [];
const SUBJECT = 'News for {{ firstName }}: November';
for (const [name, html, subject] of [
  ['tiny template', TINY_HTML, SUBJECT],
  ['15 KB newsletter', NEWSLETTER_HTML, SUBJECT],
  [
    '15 KB newsletter, 2 custom fields',
    NEWSLETTER_WITH_FIELDS,
    'News for {{ fields.company }}: November',
  ],
] as const) {
  const content = contentOf(html, subject);
  rows.push([
    `${name} (${(html.length / 1024).toFixed(1)} KB)`,
    await cpuPerMail(MAILS, perMail(content)),
    await cpuPerMail(MAILS, prepared(content)),
  ]);
}

console.log(
  `CPU per mail, ${MAILS} mails after ${MAILS} to warm up; prepared once per ${MAX_BATCH}:`,
);
console.log(
  [
    '| template | composeMessage per mail | prepareMessage per batch |',
    '|---|---:|---:|',
    ...rows.map(
      ([name, old, batch]) =>
        `| ${name} | ${old.toFixed(3)} ms | ${batch.toFixed(3)} ms |`,
    ),
  ].join('\n'),
);
