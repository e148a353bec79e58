/**
 * The test send of a campaign: its content to a few addresses, "[Test]"
 * before the subject, links that change nothing. It writes nothing (no
 * recipient, no stats, no quota), and stays available while the provider
 * pauses the organization: it then goes out under the application address
 * (spec: `sending_paused`), as every test send does.
 */
import * as v from 'valibot';
import { NotFoundError } from '../errors.ts';
import { prepareMessage } from '../mail/compose.ts';
import { asTestMail, sendNow } from '../mail/send-now.ts';
import { testSenderOf } from '../sending/sender.ts';
import type { CampaignsDeps as Deps } from './ports.ts';

/** What became of the test email to one address. */
export const CAMPAIGN_TEST_STATUSES = [
  'sent',
  'blocked',
  'not_allowed',
  'send_refused',
] as const;

/** The answer of POST /campaigns/{campaignId}/test-send. */
export const CampaignTestSendResult = v.pipe(
  v.object({
    sent: v.pipe(v.number(), v.description('How many test emails went out')),
    results: v.array(
      v.object({
        to: v.pipe(v.string(), v.email()),
        status: v.pipe(
          v.picklist(CAMPAIGN_TEST_STATUSES),
          v.description(
            '`sent`; `blocked`: sending is off application-wide; `not_allowed`: the organization is not on the sending allowlist; `send_refused`: the provider refused it',
          ),
        ),
      }),
    ),
  }),
  v.title('CampaignTestSendResult'),
);
export type CampaignTestSendResult = v.InferOutput<
  typeof CampaignTestSendResult
>;

/**
 * Sends one test email of the campaign to each address: the campaign's
 * subject (with "[Test] " before it) and content as a recipient would get
 * them, the stand-in reader's name empty and each custom field its
 * default, every link a test link. The content is prepared once for every
 * address.
 */
export const testSendCampaign = async (
  deps: Pick<
    Deps,
    | 'campaigns'
    | 'appSettings'
    | 'organizations'
    | 'domains'
    | 'identities'
    | 'endpoints'
    | 'links'
    | 'clock'
    | 'mailer'
    | 'fields'
  >,
  orgId: string,
  campaignId: string,
  input: { emails: string[] },
): Promise<CampaignTestSendResult> => {
  const found = await deps.campaigns.getWithContent(orgId, campaignId);
  if (!found) {
    throw new NotFoundError('campaign.notFound', `No campaign ${campaignId}`);
  }
  const { campaign, content } = found;
  const emails = [...new Set(input.emails)];
  const all = (status: (typeof CAMPAIGN_TEST_STATUSES)[number]) => ({
    sent: 0,
    results: emails.map((to) => ({ to, status })),
  });
  if (!(await deps.appSettings.get()).sendingEnabled) return all('blocked');
  const org = await deps.organizations.get(orgId);
  if (!org?.sendingAllowed) return all('not_allowed');
  const { from, replyTo } = await testSenderOf(deps, orgId);
  const composeFor = await prepareMessage(deps, {
    orgId,
    subject: campaign.subject,
    html: content.html,
    from,
    ...(replyTo ? { replyTo } : {}),
    ...(org.postalAddress ? { postalAddress: org.postalAddress } : {}),
    topicId: campaign.topicId ?? 'test',
    test: true,
  });
  const results: CampaignTestSendResult['results'] = [];
  for (const to of emails) {
    const message = await composeFor({ id: 'test', email: to });
    const status = await sendNow(deps, asTestMail(message, orgId), {
      refused: 'Campaign test send refused',
      orgId,
      campaignId,
    });
    results.push({ to, status });
  }
  return {
    sent: results.filter((r) => r.status === 'sent').length,
    results,
  };
};
