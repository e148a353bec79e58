/**
 * The rules of mail statistics one by one: who opened or clicked
 * (engagement.ts), a click's burst (click-bursts.ts), what an event adds to
 * the counters and how its marks are kept (counters.ts), and an address's
 * mailbox provider (mailbox-providers.ts).
 */
import { describe, expect, it } from 'vitest';
import {
  BURST_WINDOW_MS,
  CLICK_HISTORY_LIMIT,
  NO_CLICKS,
  recordClick,
} from '../../../shared/statistics/click-bursts.ts';
import {
  countsOf,
  flagsToMarks,
  marksToFlags,
  NO_MARKS,
} from '../../../shared/statistics/counters.ts';
import {
  judgeClick,
  judgeOpen,
} from '../../../shared/statistics/engagement.ts';
import {
  domainOf,
  MailboxProviders,
  providerOfDomain,
  providerOfMx,
} from '../../../shared/statistics/mailbox-providers.ts';

const SENT = '2026-05-04T09:00:00.000Z';
const DELIVERED = '2026-05-04T09:00:02.000Z';
const deliveredPlus = (seconds: number) =>
  new Date(Date.parse(DELIVERED) + seconds * 1000).toISOString();
const CHROME =
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36';

describe('who opened', () => {
  const times = { sentAt: SENT, deliveredAt: DELIVERED };

  it("takes Apple's bare agent, a scanner's network or agent, and any open within 3 s of delivery for a machine", () => {
    expect(
      judgeOpen({ at: deliveredPlus(3600), userAgent: ' Mozilla/5.0 ' }, times),
    ).toEqual({ machine: true, reason: 'apple-mpp' });
    expect(
      judgeOpen({ at: deliveredPlus(3600), ipAddress: '40.107.3.4' }, times),
    ).toEqual({ machine: true, reason: 'scanner-network' });
    expect(
      judgeOpen(
        { at: deliveredPlus(3600), ipAddress: '2a01:111:f400:7e00::12' },
        times,
      ),
    ).toEqual({ machine: true, reason: 'scanner-network' });
    expect(
      judgeOpen(
        { at: deliveredPlus(3600), userAgent: 'python-requests/2.31' },
        times,
      ),
    ).toEqual({ machine: true, reason: 'scanner-agent' });
    expect(
      judgeOpen({ at: deliveredPlus(2.9), userAgent: CHROME }, times),
    ).toEqual({
      machine: true,
      reason: 'too-soon',
    });
    // Before the delivery SES reported: a scan during it.
    expect(judgeOpen({ at: deliveredPlus(-1) }, times).machine).toBe(true);
  });

  it("takes anything else for a person: Gmail's proxy, a browser past 3 s, a phone named CUBOT, no agent at all, Safe Links' network", () => {
    const person = { machine: false };
    expect(
      judgeOpen(
        {
          at: deliveredPlus(3),
          userAgent:
            'Mozilla/5.0 (Windows NT 5.1; rv:11.0) Gecko Firefox/11.0 (via ggpht.com GoogleImageProxy)',
        },
        times,
      ),
    ).toEqual(person);
    expect(
      judgeOpen(
        {
          at: deliveredPlus(60),
          userAgent:
            'Mozilla/5.0 (Linux; Android 10; CUBOT X30) AppleWebKit/537.36 Chrome/90 Mobile Safari/537.36',
        },
        times,
      ),
    ).toEqual(person);
    expect(judgeOpen({ at: deliveredPlus(60) }, times)).toEqual(person);
    // Outlook on the web's image proxy lives beside Safe Links.
    expect(
      judgeOpen({ at: deliveredPlus(60), ipAddress: '40.94.29.84' }, times),
    ).toEqual(person);
    // No times known: the timing rule says nothing.
    expect(judgeOpen({ at: deliveredPlus(0) }, {})).toEqual(person);
    expect(judgeOpen({ at: 'not a time' }, times)).toEqual(person);
  });

  it('measures from the send while the delivery is not recorded', () => {
    expect(
      judgeOpen({ at: deliveredPlus(0.5) }, { sentAt: SENT }).machine,
    ).toBe(true);
    expect(
      judgeOpen({ at: deliveredPlus(1.5) }, { sentAt: SENT }).machine,
    ).toBe(false);
  });
});

describe('who clicked, on the click alone', () => {
  const times = { sentAt: SENT, deliveredAt: DELIVERED };

  it('takes a scanner’s network (Safe Links’ too), an automated agent or the bare Mozilla/5.0, and any click within 10 s of delivery for a scanner', () => {
    expect(
      judgeClick({ at: deliveredPlus(600), ipAddress: '40.94.29.84' }, times),
    ).toEqual({ machine: true, reason: 'scanner-network' });
    expect(
      judgeClick(
        { at: deliveredPlus(600), ipAddress: '209.222.82.250' },
        times,
      ),
    ).toEqual({ machine: true, reason: 'scanner-network' });
    expect(
      judgeClick({ at: deliveredPlus(600), userAgent: 'Mozilla/5.0' }, times),
    ).toEqual({ machine: true, reason: 'scanner-agent' });
    expect(
      judgeClick({ at: deliveredPlus(600), userAgent: 'Googlebot/2.1' }, times),
    ).toEqual({ machine: true, reason: 'scanner-agent' });
    expect(
      judgeClick({ at: deliveredPlus(9.9), userAgent: CHROME }, times),
    ).toEqual({
      machine: true,
      reason: 'too-soon',
    });
  });

  it('takes a browser past 10 s for a person', () => {
    expect(
      judgeClick(
        { at: deliveredPlus(10), userAgent: CHROME, ipAddress: '82.64.1.2' },
        times,
      ),
    ).toEqual({ machine: false });
  });
});

describe('bursts of clicks', () => {
  const click = (at: number, link: string, scanner = false) => ({
    at,
    link,
    scanner,
  });

  it('flips the earlier human clicks of a burst of 3 links within 2 s, and counts the recipient’s human clicks to 0', () => {
    // Act
    const first = recordClick(NO_CLICKS, click(1_000, 'aaaa'));
    const second = recordClick(first.history, click(1_500, 'bbbb'));
    const third = recordClick(
      second.history,
      click(1_000 + BURST_WINDOW_MS, 'cccc'),
    );

    // Assert
    expect(first.marks).toEqual({
      machine: false,
      firstHuman: true,
      firstMachine: false,
      flipped: 0,
      lostHuman: false,
    });
    expect(second.marks.machine).toBe(false);
    expect(third.marks).toEqual({
      machine: true,
      firstHuman: false,
      firstMachine: true,
      flipped: 2,
      lostHuman: true,
    });
    expect(third.history).toMatchObject({ human: 0, scanner: 3 });
    expect(third.history.entries.every((e) => e.endsWith(':s'))).toBe(true);
  });

  it('leaves clicks farther apart, and one link clicked often, to a person', () => {
    // Act
    let history = NO_CLICKS;
    for (const [at, link] of [
      [0, 'aaaa'],
      [2_500, 'bbbb'],
      [5_000, 'cccc'],
      [5_100, 'cccc'],
      [5_200, 'cccc'],
    ] as const) {
      history = recordClick(history, click(at, link)).history;
    }

    // Assert
    expect(history).toMatchObject({ human: 5, scanner: 0 });
  });

  it('keeps the 24 latest clicks only, and its counts of all of them', () => {
    // Act
    let history = NO_CLICKS;
    for (let i = 0; i < 30; i++) {
      history = recordClick(history, click(i * 60_000, `l${i % 2}`)).history;
    }
    const late = recordClick(history, click(0, 'zzzz', true));

    // Assert
    expect(history.entries).toHaveLength(CLICK_HISTORY_LIMIT);
    expect(history).toMatchObject({ human: 30, scanner: 0 });
    // An old click arriving late is counted, and kept out of the history.
    expect(late.history).toMatchObject({ human: 30, scanner: 1 });
    expect(late.history.entries).toEqual(history.entries);
  });
});

describe('what an event adds to the counters', () => {
  it('keeps its marks as letters, the older markers’ too', () => {
    const marks = {
      open: false,
      click: true,
      link: true,
      machine: true,
      firstHuman: false,
      firstMachine: true,
      flipped: 12,
      lostHuman: true,
    };
    expect(marksToFlags(marks)).toBe('clMmxf12');
    expect(flagsToMarks(marksToFlags(marks))).toEqual(marks);
    // An older marker: firsts alone, no verdict.
    expect(flagsToMarks('ocl')).toEqual({
      ...NO_MARKS,
      open: true,
      click: true,
      link: true,
    });
  });

  it("adds a person's first open to its provider, a scanner's burst back out of the human clicks", () => {
    expect(
      countsOf(
        { type: 'Open' },
        { ...NO_MARKS, open: true, machine: false, firstHuman: true },
        'gmail',
      ),
    ).toEqual({
      opensTotal: 1,
      opensUnique: 1,
      opensHuman: 1,
      opensHumanUnique: 1,
      gmailOpens: 1,
    });
    expect(
      countsOf(
        { type: 'Click' },
        {
          ...NO_MARKS,
          machine: true,
          firstMachine: true,
          flipped: 2,
          lostHuman: true,
        },
        'microsoft',
      ),
    ).toEqual({
      clicksTotal: 1,
      clicksScanner: 3,
      clicksHuman: -2,
      clicksHumanUnique: -1,
      clicksScannerUnique: 1,
      microsoftClicks: -1,
    });
    // An event recorded before the providers and the split: the base alone.
    expect(
      countsOf(
        { type: 'Bounce', bounceType: 'Transient' },
        NO_MARKS,
        undefined,
      ),
    ).toEqual({ bouncesSoft: 1 });
    expect(countsOf({ type: 'DeliveryDelay' }, NO_MARKS, 'yahoo')).toEqual({});
  });
});

describe('mailbox providers', () => {
  it('knows the consumer domains, whatever their case', () => {
    expect(
      [
        'ana@gmail.com',
        'b@GoogleMail.com',
        'c@hotmail.co.uk',
        'd@live.com',
        'e@msn.com',
        'f@outlook.fr',
        'g@yahoo.com',
        'h@ymail.com',
        'i@aol.com',
        'j@icloud.com',
        'k@me.com',
        'l@mac.com',
        'm@yahoo.co.jp',
        'n@example.test',
      ].map((address) => providerOfDomain(domainOf(address)) ?? 'unknown'),
    ).toEqual([
      'gmail',
      'gmail',
      'microsoft',
      'microsoft',
      'microsoft',
      'microsoft',
      'yahoo',
      'yahoo',
      'yahoo',
      'apple',
      'apple',
      'apple',
      'unknown',
      'unknown',
    ]);
    expect(domainOf('no address')).toBe('');
  });

  it('names the receiving servers of an MX host', () => {
    expect(
      [
        'aspmx.l.google.com.',
        'smtp.google.com',
        'alt1.aspmx.l.google.com',
        'contoso-com.mail.protection.outlook.com',
        'mta7.am0.yahoodns.net',
        'mx01.mail.icloud.com',
        'mx.example.net',
        'notgoogle.com',
      ].map(providerOfMx),
    ).toEqual([
      'gmail',
      'gmail',
      'gmail',
      'microsoft',
      'yahoo',
      'apple',
      'other',
      'other',
    ]);
  });

  it('asks the MX of another domain once a day, takes its most preferred host, and does not remember a failure', async () => {
    // Arrange
    const asked: string[] = [];
    let failing = false;
    const mx = {
      resolveMx: async (name: string) => {
        asked.push(name);
        if (failing) throw new Error('SERVFAIL');
        return name === 'fabrikam.example'
          ? [
              { exchange: 'backup.example.net', priority: 20 },
              { exchange: 'fabrikam.mail.protection.outlook.com', priority: 0 },
            ]
          : [];
      },
    };
    let now = Date.parse(SENT);
    const deps = { mx, clock: { now: () => new Date(now) } };
    const providers = new MailboxProviders();

    // Act
    const first = await providers.of(deps, 'kim@Fabrikam.example');
    const again = await providers.of(deps, 'lea@fabrikam.example');
    const none = await providers.of(deps, 'max@nomx.example');
    failing = true;
    const failed = await providers.of(deps, 'ned@down.example');
    const listed = await providers.of(deps, 'ola@gmail.com');
    const odd = await providers.of(deps, 'pam@localhost');
    now += 25 * 3600_000;
    const tomorrow = await providers.of(deps, 'kim@fabrikam.example');
    const tableOnly = await new MailboxProviders().of(
      { clock: deps.clock },
      'kim@fabrikam.example',
    );

    // Assert
    expect([
      first,
      again,
      none,
      failed,
      listed,
      odd,
      tomorrow,
      tableOnly,
    ]).toEqual([
      'microsoft',
      'microsoft',
      'other',
      'other',
      'gmail',
      'other',
      'other',
      'other',
    ]);
    expect(asked).toEqual([
      'fabrikam.example',
      'nomx.example',
      'down.example',
      'fabrikam.example',
    ]);
  });
});
