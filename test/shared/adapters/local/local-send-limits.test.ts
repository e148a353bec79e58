import { randomUUID } from 'node:crypto';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  GetAccountCommand,
  type SESv2Client,
  SendEmailCommand,
  TooManyRequestsException,
} from '@aws-sdk/client-sesv2';
import { afterEach, beforeEach, describe, expect, inject, it } from 'vitest';
import { SesMailer } from '../../../../shared/adapters/aws/ses-mailer.ts';
import {
  LocalEmailProvider,
  readProviderState,
  setQuota,
} from '../../../../shared/adapters/local/local-email-provider.ts';
import {
  burstOf,
  LocalSendLimits,
  withSendLimits,
} from '../../../../shared/adapters/local/local-send-limits.ts';
import { NodeDnsResolver } from '../../../../shared/adapters/node-dns-resolver.ts';
import {
  isSendRefused,
  SendRefusedError,
} from '../../../../shared/mail/refusal.ts';
import { localSes } from '../../../../shared/runtime/local.ts';
import { createTestDeps, fixedClock } from '../../../support/dynamo.ts';

const HOUR_MS = 3_600_000;

/** A SendEmail to the mailbox emulator. */
const sendEmail = () =>
  new SendEmailCommand({
    FromEmailAddress: 'news@limits.example.test',
    Destination: { ToAddresses: [`limits-${randomUUID()}@example.test`] },
    Content: {
      Simple: {
        Subject: { Data: 'Hello' },
        Body: { Text: { Data: 'Hello' } },
      },
    },
  });

/** What the send threw (undefined: it was accepted). */
const outcomeOf = (ses: SESv2Client) =>
  ses.send(sendEmail()).then(
    () => undefined,
    (error: unknown) => error,
  );

describe('the local SES emulator’s sending limits', () => {
  let stateFile: string;
  let clock: ReturnType<typeof fixedClock>;
  let realMs: number;
  let ses: SESv2Client;
  let provider: LocalEmailProvider;

  beforeEach(() => {
    stateFile = join(inject('scratchDir'), `provider-${randomUUID()}.json`);
    clock = fixedClock('2026-11-22T10:00:10.000Z');
    realMs = 1_000_000;
    ses = withSendLimits(
      localSes(inject('mailboxUrl'), { sending: true }),
      new LocalSendLimits(stateFile, { clock, realNow: () => realMs }),
    );
    provider = new LocalEmailProvider(
      stateFile,
      new NodeDnsResolver([inject('dnsServer')]),
      clock,
    );
  });
  afterEach(() => ses.destroy());

  it('refuses a send over the rate with TooManyRequestsException once the short burst is spent, and accepts again when the rate allows one', async () => {
    // Arrange: at 3 a second the bucket holds 3 sends (one second's).
    await setQuota(stateFile, { max24HourSend: 1000, maxSendRate: 3 });
    expect(burstOf(3)).toBe(3);
    for (let i = 0; i < 3; i++) expect(await outcomeOf(ses)).toBeUndefined();

    // Act
    const over = await outcomeOf(ses);
    realMs += 333;
    const stillOver = await outcomeOf(ses);
    realMs += 1;
    const next = await outcomeOf(ses);

    // Assert
    expect(over).toBeInstanceOf(TooManyRequestsException);
    expect((over as Error).message).toBe('Maximum sending rate exceeded.');
    expect(stillOver).toBeInstanceOf(TooManyRequestsException);
    expect(next).toBeUndefined();
    expect((await provider.getAccount()).sentLast24Hours).toBe(4);
  });

  it('holds the sustained rate to maxSendRate: paced sends pass, one a little early is refused', async () => {
    // Arrange: the bucket spent.
    await setQuota(stateFile, { max24HourSend: 1000, maxSendRate: 10 });
    for (let i = 0; i < 10; i++) expect(await outcomeOf(ses)).toBeUndefined();

    // Act: ten seconds at the rate, then a send 20 ms early.
    const paced: unknown[] = [];
    for (let i = 0; i < 100; i++) {
      realMs += 100;
      paced.push(await outcomeOf(ses));
    }
    realMs += 80;
    const early = await outcomeOf(ses);

    // Assert
    expect(paced.filter((o) => o !== undefined)).toEqual([]);
    expect(early).toBeInstanceOf(TooManyRequestsException);
  });

  it('refuses a send past the 24-hour quota as SES does, until the first sends are 24 hours old', async () => {
    // Arrange
    await setQuota(stateFile, { max24HourSend: 2, maxSendRate: 100 });
    expect(await outcomeOf(ses)).toBeUndefined();
    clock.advance(HOUR_MS);
    expect(await outcomeOf(ses)).toBeUndefined();

    // Act
    clock.advance(23 * HOUR_MS);
    const spent = await outcomeOf(ses);
    clock.advance(60_000);
    const again = await outcomeOf(ses);

    // Assert
    expect(spent).toBeInstanceOf(TooManyRequestsException);
    expect((spent as Error).message).toBe('Daily message quota exceeded.');
    expect(again).toBeUndefined();
  });

  it('counts accepted sends in sentLast24Hours, which slides with the clock', async () => {
    // Arrange
    const before = await provider.getAccount();

    // Act
    await outcomeOf(ses);
    await outcomeOf(ses);
    const afterTwo = await provider.getAccount();
    clock.advance(12 * HOUR_MS);
    realMs += 1000;
    await outcomeOf(ses);
    const afterThree = await provider.getAccount();
    clock.advance(12 * HOUR_MS + 60_000);
    const firstTwoGone = await provider.getAccount();
    clock.advance(12 * HOUR_MS);
    const allGone = await provider.getAccount();

    // Assert: the default quota, and the rolling count.
    expect(before).toEqual({
      max24HourSend: 50_000,
      maxSendRate: 14,
      sentLast24Hours: 0,
    });
    expect(afterTwo.sentLast24Hours).toBe(2);
    expect(afterThree.sentLast24Hours).toBe(3);
    expect(firstTwoGone.sentLast24Hours).toBe(1);
    expect(allGone.sentLast24Hours).toBe(0);
  });

  it('keeps per-minute counts of the last 24 hours in the state file', async () => {
    // Arrange
    await outcomeOf(ses);
    clock.advance(25 * HOUR_MS);
    realMs += 1000;

    // Act
    await outcomeOf(ses);
    await outcomeOf(ses);

    // Assert: the minute 25 hours ago is dropped.
    const state = await readProviderState(stateFile);
    expect(state.sent).toEqual({ '2026-11-23T11:00:00.000Z': 2 });
    expect(state.quota.sentLast24Hours).toBe(2);
  });

  it('lets concurrent sends take the places left, and no more', async () => {
    // Arrange: a bucket of 5.
    await setQuota(stateFile, { max24HourSend: 1000, maxSendRate: 5 });

    // Act
    const outcomes = await Promise.all(
      Array.from({ length: 12 }, () => outcomeOf(ses)),
    );

    // Assert
    expect(outcomes.filter((o) => o === undefined)).toHaveLength(5);
    expect((await provider.getAccount()).sentLast24Hours).toBe(5);
  });

  it('sees a quota set while it runs at the next send', async () => {
    // Arrange
    expect(await outcomeOf(ses)).toBeUndefined();

    // Act
    await setQuota(stateFile, { max24HourSend: 1, maxSendRate: 14 });
    const refused = await outcomeOf(ses);

    // Assert
    expect((refused as Error).message).toBe('Daily message quota exceeded.');
  });

  it('gives the place of a send that failed back, and counts only those accepted', async () => {
    // Arrange
    const limits = new LocalSendLimits(stateFile, { clock });
    await setQuota(stateFile, { max24HourSend: 1, maxSendRate: 14 });

    // Act
    const failed = await limits.admit();
    failed.release();
    const accepted = await limits.admit();
    await accepted.accept();
    await accepted.accept();
    const over = await limits.admit().catch((error: unknown) => error);

    // Assert
    expect((over as Error).message).toBe('Daily message quota exceeded.');
    expect((await provider.getAccount()).sentLast24Hours).toBe(1);
  });

  it('keeps the counts of a write that failed for the next one', async () => {
    // Arrange
    const limits = new LocalSendLimits(stateFile, { clock });
    const first = await limits.admit();
    await writeFile(stateFile, '{ half a file');

    // Act: the send is not failed; its count waits for the next write.
    await first.accept();
    await rm(stateFile);
    const second = await limits.admit();
    await second.accept();

    // Assert
    expect((await provider.getAccount()).sentLast24Hours).toBe(2);
  });

  it('leaves the client’s other calls alone', async () => {
    // Arrange: the quota spent; every call answered before it leaves.
    ses.middlewareStack.add(
      () => async () => ({
        output: { $metadata: {}, SendingEnabled: true },
        response: {},
      }),
      { step: 'build', name: 'answerInProcess' },
    );
    await setQuota(stateFile, { max24HourSend: 1, maxSendRate: 1 });
    await ses.send(sendEmail());
    const refused = await outcomeOf(ses);

    // Act
    const account = await ses.send(new GetAccountCommand({}));

    // Assert
    expect(refused).toBeInstanceOf(TooManyRequestsException);
    expect(account.SendingEnabled).toBe(true);
  });

  it('reaches SesMailer as SendRefusedErrors: the rate throttled, the 24-hour quota paused', async () => {
    // Arrange
    const mailer = new SesMailer(ses);
    const message = {
      from: 'news@limits.example.test',
      to: 'ana@example.test',
      subject: 'Hi',
      html: '<p>Hi</p>',
      text: 'Hi',
    };
    await setQuota(stateFile, { max24HourSend: 2, maxSendRate: 1 });
    await mailer.send(message);

    // Act: the burst of 1 is spent; a second later one more is allowed.
    const tooFast = await mailer.send(message).catch((e: unknown) => e);
    realMs += 1000;
    await mailer.send(message);
    realMs += 1000;
    const spent = await mailer.send(message).catch((e: unknown) => e);

    // Assert
    expect(isSendRefused(tooFast, 'throttled')).toBe(true);
    expect(isSendRefused(spent, 'paused')).toBe(true);
  });
});

describe('the local runtime’s mailer', () => {
  it('is limited by the provider state file of its deps', async () => {
    // Arrange
    const { deps, providerStateFile } = await createTestDeps();
    await setQuota(providerStateFile, { max24HourSend: 1, maxSendRate: 14 });
    const message = {
      from: 'news@limits.example.test',
      to: 'ana@example.test',
      subject: 'Hi',
      html: '<p>Hi</p>',
      text: 'Hi',
    };

    // Act
    await deps.mailer.send(message);
    const spent = await deps.mailer.send(message).catch((e: unknown) => e);

    // Assert
    expect(spent).toBeInstanceOf(SendRefusedError);
    expect((spent as SendRefusedError).kind).toBe('paused');
    expect((await deps.provider.getAccount()).sentLast24Hours).toBe(1);
  });
});
