/**
 * Custom fields as merge values in the steps of journeys (issue 31): a
 * sequence step renders each contact's values (the default for a contact
 * without one) through the `steps` consumer, and a series step, which is
 * sent as a campaign, through the senders.
 */
import { describe, expect, it } from 'vitest';
import { addContact } from '../../../shared/audience/contacts.ts';
import { createField } from '../../../shared/fields/fields.ts';
import {
  createSequence,
  createSeries,
  updateSequence,
} from '../../../shared/sequences/heads.ts';
import { publishVersion } from '../../../shared/sequences/publish.ts';
import { seriesStepScheduleName } from '../../../shared/sequences/series-schedule.ts';
import { uniqueEmail } from '../../support/audience.ts';
import {
  fillDraft,
  subjects,
  type World,
  journeyWorld as world,
} from '../../support/journeys.ts';

const HOUR = 3_600_000;

/** The field `plan` (default `free`) and two contacts: one on `pro`. */
const planAndReaders = async (w: World) => {
  await createField(w.deps, w.orgId, {
    key: 'plan',
    label: 'Plan',
    type: 'option',
    options: ['free', 'pro'],
    defaultValue: 'free',
  });
  for (const fields of [{ plan: 'pro' }, undefined]) {
    await addContact(w.deps, w.orgId, w.listId, {
      email: uniqueEmail('reader'),
      doubleOptIn: false,
      ...(fields ? { fields } : {}),
    });
  }
  await w.events.settle();
};

describe('custom fields in journey steps', () => {
  it('a sequence step’s subject merges each contact’s value, or the field’s default', async () => {
    // Arrange
    const w = await world();
    const { id } = await createSequence(w.deps, w.orgId, {
      name: 'Welcome',
      triggerType: 'list_joined',
      triggerTargetId: w.listId,
    });
    const versionId = (await w.deps.sequences.get(w.orgId, id))
      ?.draftVersionId as string;
    await fillDraft(
      w.deps,
      w.orgId,
      id,
      versionId,
      'Your {{ fields.plan }} plan,',
      {
        steps: 1,
      },
    );
    await publishVersion(w.deps, w.orgId, id, versionId);
    await updateSequence(w.deps, w.orgId, id, { status: 'active' });
    // Act
    await planAndReaders(w);
    await w.run();
    // Assert
    expect(subjects(w).sort()).toEqual([
      'Your free plan, 1',
      'Your pro plan, 1',
    ]);
  });

  it('a series step, sent as its campaign, merges them the same way', async () => {
    // Arrange
    const w = await world();
    const series = await createSeries(w.deps, w.orgId, {
      name: 'Course',
      listId: w.listId,
      startsAt: new Date(w.now().getTime() + HOUR).toISOString(),
      audienceSegmentId: null,
      audienceTagId: null,
      topicId: null,
    });
    const versionId = (await w.deps.sequences.get(w.orgId, series.id))
      ?.draftVersionId as string;
    await fillDraft(
      w.deps,
      w.orgId,
      series.id,
      versionId,
      'Lesson for {{ fields.plan }}:',
      {
        steps: 1,
      },
    );
    await publishVersion(w.deps, w.orgId, series.id, versionId);
    await updateSequence(w.deps, w.orgId, series.id, { status: 'active' });
    await planAndReaders(w);
    const fire = w.schedules.get(
      seriesStepScheduleName(w.orgId, series.id, versionId, 1),
    )?.message;
    // Act
    w.advance(HOUR);
    await w.handle(fire);
    await w.drain();
    // Assert
    expect(subjects(w).sort()).toEqual([
      'Lesson for free: 1',
      'Lesson for pro: 1',
    ]);
  });
});
