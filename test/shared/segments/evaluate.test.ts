import { describe, expect, it } from 'vitest';
import {
  matchesCondition,
  matchesSegment,
  type SegmentContact,
} from '../../../shared/segments/evaluate.ts';
import type { SegmentCondition } from '../../../shared/segments/model.ts';

const VIP = '0195f3a0-0000-7000-8000-00000000000a';
const GOLD = '0195f3a0-0000-7000-8000-00000000000b';

/** A subscribed contact, joined and confirmed, with the VIP tag. */
const contact = (overrides: Partial<SegmentContact> = {}): SegmentContact => ({
  email: 'ada.lovelace@analytical.example',
  firstName: 'Ada',
  lastName: 'Lovelace',
  status: 'subscribed',
  tagIds: [VIP],
  createdAt: '2026-03-01T10:00:00.000Z',
  joinedAt: '2026-03-02T10:00:00.000Z',
  confirmedAt: '2026-03-02T09:00:00.000Z',
  ...overrides,
});

/** Without the optional dates and names. */
const bare = (): SegmentContact => {
  const {
    joinedAt: _j,
    confirmedAt: _c,
    firstName: _f,
    lastName: _l,
    ...rest
  } = contact();
  return rest;
};

const holds = (condition: SegmentCondition, who = contact()) =>
  matchesCondition(condition, who);

describe('matchesCondition: tag', () => {
  it('has is true when the contact carries the tag, hasNot when it does not', () => {
    expect(holds({ field: 'tag', operator: 'has', value: VIP })).toBe(true);
    expect(holds({ field: 'tag', operator: 'has', value: GOLD })).toBe(false);
    expect(holds({ field: 'tag', operator: 'hasNot', value: VIP })).toBe(false);
    expect(holds({ field: 'tag', operator: 'hasNot', value: GOLD })).toBe(true);
  });

  it('a contact without tags has none and lacks every one', () => {
    const untagged = contact({ tagIds: [] });
    expect(holds({ field: 'tag', operator: 'has', value: VIP }, untagged)).toBe(
      false,
    );
    expect(
      holds({ field: 'tag', operator: 'hasNot', value: VIP }, untagged),
    ).toBe(true);
  });
});

describe('matchesCondition: status', () => {
  it('is and isNot compare the status exactly', () => {
    expect(
      holds({ field: 'status', operator: 'is', value: 'subscribed' }),
    ).toBe(true);
    expect(holds({ field: 'status', operator: 'is', value: 'pending' })).toBe(
      false,
    );
    expect(
      holds({ field: 'status', operator: 'isNot', value: 'subscribed' }),
    ).toBe(false);
    expect(
      holds({ field: 'status', operator: 'isNot', value: 'unsubscribed' }),
    ).toBe(true);
  });
});

describe('matchesCondition: emailDomain', () => {
  it('is compares the part after @ exactly, case-insensitively', () => {
    const shouting = contact({ email: 'Ada@Analytical.EXAMPLE' });
    for (const who of [contact(), shouting]) {
      expect(
        holds(
          { field: 'emailDomain', operator: 'is', value: 'ANALYTICAL.example' },
          who,
        ),
      ).toBe(true);
    }
  });

  it('a subdomain, a parent domain or a suffix is another domain', () => {
    const sub = contact({ email: 'ada@mail.analytical.example' });
    expect(
      holds(
        { field: 'emailDomain', operator: 'is', value: 'analytical.example' },
        sub,
      ),
    ).toBe(false);
    expect(
      holds({ field: 'emailDomain', operator: 'is', value: 'example' }),
    ).toBe(false);
    expect(
      holds({ field: 'emailDomain', operator: 'is', value: 'lytical.example' }),
    ).toBe(false);
  });

  it('isNot is the negation of is', () => {
    expect(
      holds({
        field: 'emailDomain',
        operator: 'isNot',
        value: 'analytical.example',
      }),
    ).toBe(false);
    expect(
      holds({
        field: 'emailDomain',
        operator: 'isNot',
        value: 'other.example',
      }),
    ).toBe(true);
  });

  it('reads the domain after the last @ of a quoted local part', () => {
    const quoted = contact({ email: '"a@b"@analytical.example' });
    expect(
      holds(
        { field: 'emailDomain', operator: 'is', value: 'analytical.example' },
        quoted,
      ),
    ).toBe(true);
  });
});

describe('matchesCondition: email', () => {
  it('contains finds a substring of the address, case-insensitively', () => {
    expect(holds({ field: 'email', operator: 'contains', value: 'LOVE' })).toBe(
      true,
    );
    expect(
      holds({ field: 'email', operator: 'contains', value: '@analytical' }),
    ).toBe(true);
    expect(
      holds({ field: 'email', operator: 'contains', value: 'babbage' }),
    ).toBe(false);
  });

  it('notContains is the negation of contains', () => {
    expect(
      holds({ field: 'email', operator: 'notContains', value: 'Lovelace' }),
    ).toBe(false);
    expect(
      holds({ field: 'email', operator: 'notContains', value: 'babbage' }),
    ).toBe(true);
  });
});

describe('matchesCondition: name', () => {
  it('contains looks in the first name and in the last name, case-insensitively', () => {
    expect(holds({ field: 'name', operator: 'contains', value: 'aDa' })).toBe(
      true,
    );
    expect(holds({ field: 'name', operator: 'contains', value: 'LACE' })).toBe(
      true,
    );
  });

  it('contains finds text spanning first and last name joined by a space', () => {
    expect(
      holds({ field: 'name', operator: 'contains', value: 'ada love' }),
    ).toBe(true);
    expect(
      holds({ field: 'name', operator: 'contains', value: 'adalove' }),
    ).toBe(false);
  });

  it('never looks in the address', () => {
    expect(
      holds({ field: 'name', operator: 'contains', value: 'analytical' }),
    ).toBe(false);
  });

  it('a contact without names contains nothing and so matches every notContains', () => {
    expect(
      holds({ field: 'name', operator: 'contains', value: 'a' }, bare()),
    ).toBe(false);
    expect(
      holds({ field: 'name', operator: 'notContains', value: 'a' }, bare()),
    ).toBe(true);
  });

  it('a last name alone is searched without a leading space', () => {
    const lastOnly = contact({ firstName: undefined, lastName: 'Byron' });
    delete lastOnly.firstName;
    expect(
      holds({ field: 'name', operator: 'contains', value: ' byron' }, lastOnly),
    ).toBe(false);
    expect(
      holds({ field: 'name', operator: 'contains', value: 'byron' }, lastOnly),
    ).toBe(true);
  });

  it('notContains is false when either name contains the text', () => {
    expect(
      holds({ field: 'name', operator: 'notContains', value: 'lovelace' }),
    ).toBe(false);
    expect(
      holds({ field: 'name', operator: 'notContains', value: 'babbage' }),
    ).toBe(true);
  });
});

describe('matchesCondition: dates', () => {
  const fields = ['createdAt', 'joinedAt', 'confirmedAt'] as const;

  it.each(fields)(
    '%s before and after are strict comparisons with the instant',
    (field) => {
      const at = contact()[field] as string;
      const earlier = new Date(Date.parse(at) - 1).toISOString();
      const later = new Date(Date.parse(at) + 1).toISOString();
      expect(holds({ field, operator: 'before', value: later })).toBe(true);
      expect(holds({ field, operator: 'before', value: at })).toBe(false);
      expect(holds({ field, operator: 'before', value: earlier })).toBe(false);
      expect(holds({ field, operator: 'after', value: earlier })).toBe(true);
      expect(holds({ field, operator: 'after', value: at })).toBe(false);
      expect(holds({ field, operator: 'after', value: later })).toBe(false);
    },
  );

  it('compares instants, not strings: an instant written with an offset compares by its time', () => {
    // 2026-03-02T10:00Z is 2026-03-02T11:00+01:00.
    expect(
      holds({
        field: 'joinedAt',
        operator: 'before',
        value: '2026-03-02T11:00:00.001+01:00',
      }),
    ).toBe(true);
    expect(
      holds({
        field: 'joinedAt',
        operator: 'after',
        value: '2026-03-02T10:59:59.999+01:00',
      }),
    ).toBe(true);
  });

  it.each(['joinedAt', 'confirmedAt'] as const)(
    'a contact without %s matches neither before nor after',
    (field) => {
      expect(
        holds(
          { field, operator: 'before', value: '2999-01-01T00:00:00.000Z' },
          bare(),
        ),
      ).toBe(false);
      expect(
        holds(
          { field, operator: 'after', value: '1970-01-01T00:00:00.000Z' },
          bare(),
        ),
      ).toBe(false);
    },
  );

  it.each(['joinedAt', 'confirmedAt'] as const)(
    'exists and notExists tell whether %s is set',
    (field) => {
      expect(holds({ field, operator: 'exists' })).toBe(true);
      expect(holds({ field, operator: 'notExists' })).toBe(false);
      expect(holds({ field, operator: 'exists' }, bare())).toBe(false);
      expect(holds({ field, operator: 'notExists' }, bare())).toBe(true);
    },
  );
});

describe('matchesSegment', () => {
  const vip: SegmentCondition = { field: 'tag', operator: 'has', value: VIP };
  const pending: SegmentCondition = {
    field: 'status',
    operator: 'is',
    value: 'pending',
  };
  const analytical: SegmentCondition = {
    field: 'emailDomain',
    operator: 'is',
    value: 'analytical.example',
  };

  it('all matches only when every condition holds', () => {
    expect(
      matchesSegment(
        { match: 'all', conditions: [vip, analytical] },
        contact(),
      ),
    ).toBe(true);
    expect(
      matchesSegment(
        { match: 'all', conditions: [vip, pending, analytical] },
        contact(),
      ),
    ).toBe(false);
  });

  it('any matches when one condition holds, and not when none does', () => {
    expect(
      matchesSegment({ match: 'any', conditions: [pending, vip] }, contact()),
    ).toBe(true);
    expect(
      matchesSegment(
        { match: 'any', conditions: [pending] },
        contact({ status: 'unsubscribed' }),
      ),
    ).toBe(false);
  });

  it('with no condition, all matches every contact and any none', () => {
    expect(matchesSegment({ match: 'all', conditions: [] }, contact())).toBe(
      true,
    );
    expect(matchesSegment({ match: 'any', conditions: [] }, contact())).toBe(
      false,
    );
  });

  it('all over a missing date is false, any still matches through another condition', () => {
    const joinedBefore: SegmentCondition = {
      field: 'joinedAt',
      operator: 'before',
      value: '2999-01-01T00:00:00.000Z',
    };
    const imported = contact({ joinedAt: undefined });
    delete imported.joinedAt;
    expect(
      matchesSegment(
        { match: 'all', conditions: [vip, joinedBefore] },
        imported,
      ),
    ).toBe(false);
    expect(
      matchesSegment(
        { match: 'any', conditions: [joinedBefore, vip] },
        imported,
      ),
    ).toBe(true);
  });
});

describe('matchesCondition: custom fields (fields.<key>)', () => {
  /** A contact holding a value of each type, and one holding none. */
  const holder = contact({
    fields: {
      company: 'Analytical Engines Ltd',
      seats: 12,
      renewal: '2026-06-15',
      trial: false,
      plan: 'pro',
    },
  });
  const none = contact();
  const at = (
    field: string,
    operator: string,
    value?: string | number | boolean,
  ) =>
    ({
      field,
      operator,
      ...(value === undefined ? {} : { value }),
    }) as SegmentCondition;
  const both = (condition: SegmentCondition) => [
    holds(condition, holder),
    holds(condition, none),
  ];

  it('is and isNot compare the stored value exactly, for every type; a contact without one is in isNot only', () => {
    expect(both(at('fields.plan', 'is', 'pro'))).toEqual([true, false]);
    expect(both(at('fields.plan', 'isNot', 'pro'))).toEqual([false, true]);
    expect(both(at('fields.plan', 'is', 'free'))).toEqual([false, false]);
    expect(both(at('fields.plan', 'isNot', 'free'))).toEqual([true, true]);
    // Text: exact, so case counts.
    expect(both(at('fields.company', 'is', 'Analytical Engines Ltd'))).toEqual([
      true,
      false,
    ]);
    expect(both(at('fields.company', 'is', 'analytical engines ltd'))).toEqual([
      false,
      false,
    ]);
    expect(both(at('fields.seats', 'is', 12))).toEqual([true, false]);
    expect(both(at('fields.seats', 'isNot', 12))).toEqual([false, true]);
    expect(both(at('fields.renewal', 'is', '2026-06-15'))).toEqual([
      true,
      false,
    ]);
    expect(both(at('fields.trial', 'is', false))).toEqual([true, false]);
    expect(both(at('fields.trial', 'is', true))).toEqual([false, false]);
    expect(both(at('fields.trial', 'isNot', true))).toEqual([true, true]);
  });

  it('contains and notContains look in a text case-insensitively (the condition stores its text lower-cased)', () => {
    expect(both(at('fields.company', 'contains', 'engines'))).toEqual([
      true,
      false,
    ]);
    expect(both(at('fields.company', 'contains', 'difference'))).toEqual([
      false,
      false,
    ]);
    expect(both(at('fields.company', 'notContains', 'engines'))).toEqual([
      false,
      true,
    ]);
    expect(both(at('fields.company', 'notContains', 'difference'))).toEqual([
      true,
      true,
    ]);
  });

  it('greaterThan and lessThan compare numbers strictly; a contact without one matches neither', () => {
    expect(both(at('fields.seats', 'greaterThan', 11))).toEqual([true, false]);
    expect(both(at('fields.seats', 'greaterThan', 12))).toEqual([false, false]);
    expect(both(at('fields.seats', 'lessThan', 13))).toEqual([true, false]);
    expect(both(at('fields.seats', 'lessThan', 12))).toEqual([false, false]);
    expect(both(at('fields.seats', 'lessThan', -0.5))).toEqual([false, false]);
  });

  it('before and after compare dates strictly, by day; a contact without one matches neither', () => {
    expect(both(at('fields.renewal', 'before', '2026-06-16'))).toEqual([
      true,
      false,
    ]);
    expect(both(at('fields.renewal', 'before', '2026-06-15'))).toEqual([
      false,
      false,
    ]);
    expect(both(at('fields.renewal', 'after', '2026-06-14'))).toEqual([
      true,
      false,
    ]);
    expect(both(at('fields.renewal', 'after', '2026-06-15'))).toEqual([
      false,
      false,
    ]);
    // Across years and months: as days, not as texts of another shape.
    expect(holds(at('fields.renewal', 'after', '2025-12-31'), holder)).toBe(
      true,
    );
    expect(holds(at('fields.renewal', 'before', '2026-10-01'), holder)).toBe(
      true,
    );
  });

  it('exists and notExists tell whether the contact holds a value, whatever it is (false and 0 are values)', () => {
    for (const key of ['company', 'seats', 'renewal', 'trial', 'plan']) {
      expect(both(at(`fields.${key}`, 'exists'))).toEqual([true, false]);
      expect(both(at(`fields.${key}`, 'notExists'))).toEqual([false, true]);
    }
    const zero = contact({ fields: { seats: 0 } });
    expect(holds(at('fields.seats', 'exists'), zero)).toBe(true);
    expect(holds(at('fields.seats', 'is', 0), zero)).toBe(true);
  });

  it('a value of another type than the condition’s never compares (nor matches is)', () => {
    const odd = contact({ fields: { seats: '12', renewal: 20260615 } });
    expect(holds(at('fields.seats', 'is', 12), odd)).toBe(false);
    expect(holds(at('fields.seats', 'greaterThan', 1), odd)).toBe(false);
    expect(holds(at('fields.renewal', 'after', '2000-01-01'), odd)).toBe(false);
    expect(holds(at('fields.seats', 'contains', '1'), odd)).toBe(true);
  });

  it('combines with the contact’s own conditions under all and any', () => {
    const vip: SegmentCondition = { field: 'tag', operator: 'has', value: VIP };
    const pro = at('fields.plan', 'is', 'pro');
    expect(
      matchesSegment({ match: 'all', conditions: [vip, pro] }, holder),
    ).toBe(true);
    expect(matchesSegment({ match: 'all', conditions: [vip, pro] }, none)).toBe(
      false,
    );
    expect(matchesSegment({ match: 'any', conditions: [pro, vip] }, none)).toBe(
      true,
    );
  });
});
