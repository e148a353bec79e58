/**
 * Segment conditions on custom fields (issue 31) through the pipeline:
 * each operator of each type, counted and listed; refused naming the
 * condition's path when the field, the operator or the value does not fit;
 * and a field a segment names kept from deletion (409 `field.inUse`), also
 * when the two writes race.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import {
  type ApiClient,
  createApiClient,
  createOrganizationWithKeys,
  type TestOrganization,
} from '../support/api-client.ts';

type Condition = {
  field: string;
  operator: string;
  value?: string | number | boolean;
};

describe('segment conditions on custom fields, through the pipeline', () => {
  let client: ApiClient;
  let org: TestOrganization;
  let listId: string;
  const fieldIds: Record<string, string> = {};

  beforeAll(async () => {
    client = await createApiClient();
    org = await createOrganizationWithKeys(client, 'Segment fields');
    const key = org.ownerKey;
    listId = (await client.post('/lists', { key, body: { name: 'Crm' } })).json
      .data.id;
    const definitions = [
      { key: 'company', label: 'Company', type: 'text' },
      { key: 'seats', label: 'Seats', type: 'number', defaultValue: 1 },
      { key: 'renews', label: 'Renews', type: 'date' },
      { key: 'trial', label: 'Trial', type: 'boolean', defaultValue: true },
      {
        key: 'plan',
        label: 'Plan',
        type: 'option',
        options: ['free', 'pro', 'Pro'],
      },
    ];
    for (const body of definitions) {
      const created = await client.post('/fields', { key, body });
      fieldIds[body.key] = created.json.data.id;
    }
    // Ada holds a value of every field, Bob some, Cy none (defaults do
    // not count), Dee is unsubscribed.
    const lines = [
      {
        email: 'ada@crm.example',
        fields: {
          company: 'Analytical Engines',
          seats: 12,
          renews: '2026-06-15',
          trial: false,
          plan: 'pro',
        },
      },
      {
        email: 'bob@crm.example',
        fields: { company: 'Difference Works', seats: 3, plan: 'Pro' },
      },
      { email: 'cy@crm.example' },
      {
        email: 'dee@crm.example',
        status: 'unsubscribed',
        fields: { seats: 40, trial: true },
      },
    ];
    const report = await client.post(`/lists/${listId}/contacts/bulk`, {
      key,
      body: { contacts: lines },
    });
    expect(report.json.data.rejected).toBe(0);
  });

  const create = (conditions: Condition[], name = 'Fields', match = 'all') =>
    client.post('/segments', {
      key: org.ownerKey,
      body: { name, listId, match, conditions },
    });

  /** Who a segment of one condition matches, by the listing and the count. */
  const members = async (condition: Condition) => {
    const created = await create([condition]);
    expect(created.status, JSON.stringify(created.json)).toBe(201);
    const segmentId = created.json.data.id;
    const listed = await client.get('/contacts', {
      key: org.memberKey,
      query: { segmentId },
    });
    const counted = await client.get(`/segments/${segmentId}`, {
      key: org.memberKey,
    });
    const emails = listed.json.data.map(
      (c: { email: string }) => c.email.split('@')[0],
    );
    expect(counted.json.data).toMatchObject({
      contactCount: emails.length,
      countsExact: true,
    });
    // Frees the fields for the deletion tests below.
    await client.delete(`/segments/${segmentId}`, { key: org.ownerKey });
    return emails;
  };

  it('each operator of each type selects by the values stored; a contact without one is only in isNot, notContains and notExists', async () => {
    const cases: [Condition, string[]][] = [
      // text
      [
        {
          field: 'fields.company',
          operator: 'is',
          value: 'Analytical Engines',
        },
        ['ada'],
      ],
      [
        {
          field: 'fields.company',
          operator: 'is',
          value: 'analytical engines',
        },
        [],
      ],
      [
        {
          field: 'fields.company',
          operator: 'isNot',
          value: 'Analytical Engines',
        },
        ['bob', 'cy', 'dee'],
      ],
      [
        { field: 'fields.company', operator: 'contains', value: 'ENGINES' },
        ['ada'],
      ],
      [
        { field: 'fields.company', operator: 'notContains', value: 'engines' },
        ['bob', 'cy', 'dee'],
      ],
      [{ field: 'fields.company', operator: 'exists' }, ['ada', 'bob']],
      [{ field: 'fields.company', operator: 'notExists' }, ['cy', 'dee']],
      // number (its default 1 counts for no one)
      [{ field: 'fields.seats', operator: 'is', value: 12 }, ['ada']],
      [
        { field: 'fields.seats', operator: 'isNot', value: 12 },
        ['bob', 'cy', 'dee'],
      ],
      [
        { field: 'fields.seats', operator: 'greaterThan', value: 3 },
        ['ada', 'dee'],
      ],
      [{ field: 'fields.seats', operator: 'lessThan', value: 12 }, ['bob']],
      [{ field: 'fields.seats', operator: 'lessThan', value: 2 }, []],
      [{ field: 'fields.seats', operator: 'notExists' }, ['cy']],
      // date, by day
      [
        { field: 'fields.renews', operator: 'is', value: '2026-06-15' },
        ['ada'],
      ],
      [
        { field: 'fields.renews', operator: 'before', value: '2026-06-16' },
        ['ada'],
      ],
      [{ field: 'fields.renews', operator: 'before', value: '2026-06-15' }, []],
      [
        { field: 'fields.renews', operator: 'after', value: '2026-06-14' },
        ['ada'],
      ],
      [{ field: 'fields.renews', operator: 'exists' }, ['ada']],
      // boolean (its default true counts for no one)
      [{ field: 'fields.trial', operator: 'is', value: true }, ['dee']],
      [{ field: 'fields.trial', operator: 'is', value: false }, ['ada']],
      [
        { field: 'fields.trial', operator: 'isNot', value: true },
        ['ada', 'bob', 'cy'],
      ],
      [{ field: 'fields.trial', operator: 'notExists' }, ['bob', 'cy']],
      // option: exact, so "Pro" is another option than "pro"
      [{ field: 'fields.plan', operator: 'is', value: 'pro' }, ['ada']],
      [{ field: 'fields.plan', operator: 'is', value: 'Pro' }, ['bob']],
      [
        { field: 'fields.plan', operator: 'isNot', value: 'free' },
        ['ada', 'bob', 'cy', 'dee'],
      ],
      [{ field: 'fields.plan', operator: 'exists' }, ['ada', 'bob']],
    ];
    for (const [condition, expected] of cases) {
      expect(await members(condition), JSON.stringify(condition)).toEqual(
        expected,
      );
    }
  });

  it('stores a contains text lower-cased and every other value as sent; combines with the contact’s own conditions', async () => {
    // Act
    const created = await create(
      [
        { field: 'fields.company', operator: 'contains', value: 'Works' },
        { field: 'fields.plan', operator: 'is', value: 'Pro' },
        { field: 'status', operator: 'is', value: 'subscribed' },
      ],
      'Works',
      'any',
    );
    const read = await client.get(`/segments/${created.json.data.id}`, {
      key: org.memberKey,
    });
    // Assert
    expect(created.status).toBe(201);
    expect(created.json.data.conditions).toEqual([
      { field: 'fields.company', operator: 'contains', value: 'works' },
      { field: 'fields.plan', operator: 'is', value: 'Pro' },
      { field: 'status', operator: 'is', value: 'subscribed' },
    ]);
    expect(read.json.data).toMatchObject({
      conditions: created.json.data.conditions,
      // Ada, Bob and Cy are subscribed; Dee matches nothing.
      contactCount: 3,
      subscribedCount: 3,
    });
    await client.delete(`/segments/${created.json.data.id}`, {
      key: org.ownerKey,
    });
  });

  it('answers 400 naming the path of each condition whose field, operator or value does not fit, and writes nothing', async () => {
    // Arrange
    const before = await client.scan();
    // Act
    const answer = await create([
      { field: 'fields.nope', operator: 'is', value: 'x' },
      { field: 'fields.seats', operator: 'contains', value: '1' },
      { field: 'fields.company', operator: 'greaterThan', value: 3 },
      { field: 'fields.seats', operator: 'before', value: '2026-01-01' },
      { field: 'fields.plan', operator: 'contains', value: 'pro' },
      { field: 'fields.trial', operator: 'lessThan', value: 1 },
      { field: 'fields.seats', operator: 'is', value: '12' },
      { field: 'fields.renews', operator: 'after', value: '2026-02-30' },
      { field: 'fields.plan', operator: 'is', value: 'enterprise' },
      { field: 'fields.trial', operator: 'is', value: 'yes' },
      { field: 'fields.company', operator: 'contains', value: '' },
      { field: 'fields.company', operator: 'is', value: 'a'.repeat(1001) },
      { field: 'fields.seats', operator: 'greaterThan', value: 1e300 },
      { field: 'fields.constructor', operator: 'exists' },
    ]);
    // Assert
    expect(answer.status).toBe(400);
    expect(answer.json.code).toBe('request.invalid');
    expect(answer.json.details).toEqual([
      {
        field: 'conditions.0.field',
        message: 'is not a field of the organization (see GET /fields)',
      },
      {
        field: 'conditions.1.operator',
        message:
          'must be one of is, isNot, greaterThan, lessThan, exists, notExists for the number field seats',
      },
      {
        field: 'conditions.2.operator',
        message:
          'must be one of is, isNot, contains, notContains, exists, notExists for the text field company',
      },
      {
        field: 'conditions.3.operator',
        message:
          'must be one of is, isNot, greaterThan, lessThan, exists, notExists for the number field seats',
      },
      {
        field: 'conditions.4.operator',
        message:
          'must be one of is, isNot, exists, notExists for the option field plan',
      },
      {
        field: 'conditions.5.operator',
        message:
          'must be one of is, isNot, exists, notExists for the boolean field trial',
      },
      {
        field: 'conditions.6.value',
        message:
          'must be a number: 0, or of a magnitude from 1e-130 to 9007199254740991',
      },
      {
        field: 'conditions.7.value',
        message: 'must be a date that exists, YYYY-MM-DD',
      },
      {
        field: 'conditions.8.value',
        message: "must be one of the field's options: free, pro, Pro",
      },
      { field: 'conditions.9.value', message: 'must be true or false' },
      { field: 'conditions.10.value', message: 'must not be empty' },
      {
        field: 'conditions.11.value',
        message: 'must be a text of at most 1,000 characters',
      },
      {
        field: 'conditions.12.value',
        message:
          'must be a number: 0, or of a magnitude from 1e-130 to 9007199254740991',
      },
      {
        field: 'conditions.13.field',
        message: 'is not a field of the organization (see GET /fields)',
      },
    ]);
    expect(await client.scan()).toEqual(before);
  });

  it('refuses by the schema a malformed field name, a value with exists, none with a comparison (400 naming each path)', async () => {
    // Act
    const answer = await create([
      { field: 'fields.Plan', operator: 'is', value: 'pro' },
      { field: 'fields.plan', operator: 'exists', value: 'pro' },
      { field: 'fields.seats', operator: 'greaterThan' },
      { field: 'fields.seats', operator: 'atLeast', value: 1 },
      { field: 'fields.seats', operator: 'is', value: [1] as never },
    ]);
    // Assert
    expect(answer.status).toBe(400);
    expect(answer.json.details.map((d: { field: string }) => d.field)).toEqual([
      'conditions.0.field',
      'conditions.1.value',
      'conditions.2.value',
      'conditions.3.operator',
      'conditions.4.value',
    ]);
  });

  it('PATCH checks the conditions it sends as POST does (400 naming the path), and a rename keeps them', async () => {
    // Arrange
    const created = await create([
      { field: 'fields.plan', operator: 'is', value: 'pro' },
    ]);
    const path = `/segments/${created.json.data.id}`;
    // Act
    const refused = await client.patch(path, {
      key: org.ownerKey,
      body: {
        conditions: [
          { field: 'status', operator: 'is', value: 'subscribed' },
          { field: 'fields.plan', operator: 'is', value: 'gold' },
        ],
      },
    });
    const renamed = await client.patch(path, {
      key: org.ownerKey,
      body: { name: 'Pro plan' },
    });
    // Assert
    expect(refused.status).toBe(400);
    expect(refused.json.details).toEqual([
      {
        field: 'conditions.1.value',
        message: "must be one of the field's options: free, pro, Pro",
      },
    ]);
    expect(renamed.status).toBe(200);
    expect(renamed.json.data.conditions).toEqual(created.json.data.conditions);
    await client.delete(path, { key: org.ownerKey });
  });
});

describe('deleting a field that segments name, through the pipeline', () => {
  let client: ApiClient;
  let org: TestOrganization;
  let listId: string;

  beforeAll(async () => {
    client = await createApiClient();
    org = await createOrganizationWithKeys(client, 'Field in use');
    listId = (
      await client.post('/lists', {
        key: org.ownerKey,
        body: { name: 'Audience' },
      })
    ).json.data.id;
  });

  const defineField = async (key: string) =>
    (
      await client.post('/fields', {
        key: org.ownerKey,
        body: { key, label: key, type: 'number' },
      })
    ).json.data.id as string;

  const segmentNaming = (key: string, name = `Over ${key}`) =>
    client.post('/segments', {
      key: org.ownerKey,
      body: {
        name,
        listId,
        match: 'any',
        conditions: [
          { field: 'email', operator: 'contains', value: '@' },
          { field: `fields.${key}`, operator: 'greaterThan', value: 10 },
        ],
      },
    });

  /** `start` after `ms` milliseconds. */
  const later = <T>(ms: number, start: () => Promise<T>) =>
    new Promise<T>((resolve, reject) => {
      setTimeout(() => start().then(resolve, reject), ms);
    });

  it('answers 409 field.inUse naming each segment (name and id) and keeps the field; once no segment names it, the delete passes', async () => {
    // Arrange
    const fieldId = await defineField('score');
    const first = await segmentNaming('score', 'High scores');
    const second = await segmentNaming('score', 'Also high');
    const path = `/fields/${fieldId}`;
    const before = await client.scan();
    // Act
    const refused = await client.delete(path, { key: org.ownerKey });
    const kept = await client.get(path, { key: org.memberKey });
    // Assert
    expect(refused.status).toBe(409);
    expect(refused.json.code).toBe('field.inUse');
    const [a, b] = [first.json.data.id, second.json.data.id].sort();
    const names = {
      [first.json.data.id]: 'High scores',
      [second.json.data.id]: 'Also high',
    };
    expect(refused.json.error).toContain(
      `"${names[a]}" (${a}), "${names[b]}" (${b})`,
    );
    expect(kept.status).toBe(200);
    expect(await client.scan()).toEqual(before);

    // Act: one segment no longer names it, the other is deleted.
    const patched = await client.patch(`/segments/${first.json.data.id}`, {
      key: org.ownerKey,
      body: {
        conditions: [{ field: 'email', operator: 'contains', value: '@' }],
      },
    });
    const stillRefused = await client.delete(path, { key: org.ownerKey });
    await client.delete(`/segments/${second.json.data.id}`, {
      key: org.ownerKey,
    });
    const deleted = await client.delete(path, { key: org.ownerKey });
    // Assert
    expect(patched.status).toBe(200);
    expect(stillRefused.status).toBe(409);
    expect(stillRefused.json.error).toContain(second.json.data.id);
    expect(stillRefused.json.error).not.toContain(first.json.data.id);
    expect(deleted.status).toBe(200);
    expect(deleted.json.data).toEqual({ id: fieldId, key: 'score' });
  });

  it('a segment cannot name a deleted field (its key retired): 400 naming conditions.<i>.field, on POST and PATCH', async () => {
    // Arrange
    const fieldId = await defineField('gone');
    await client.delete(`/fields/${fieldId}`, { key: org.ownerKey });
    const other = await client.post('/segments', {
      key: org.ownerKey,
      body: {
        name: 'Plain',
        listId,
        match: 'all',
        conditions: [{ field: 'email', operator: 'contains', value: '@' }],
      },
    });
    // Act
    const created = await segmentNaming('gone');
    const patched = await client.patch(`/segments/${other.json.data.id}`, {
      key: org.ownerKey,
      body: {
        conditions: [{ field: 'fields.gone', operator: 'exists' }],
      },
    });
    // Assert
    expect(created.status).toBe(400);
    expect(created.json.details).toEqual([
      {
        field: 'conditions.1.field',
        message: 'is not a field of the organization (see GET /fields)',
      },
    ]);
    expect(patched.status).toBe(400);
    expect(patched.json.details).toEqual([
      {
        field: 'conditions.0.field',
        message: 'is not a field of the organization (see GET /fields)',
      },
    ]);
  });

  it('a delete racing a segment that names the field: never both pass (the field kept while a segment names it, the segment refused once it is gone)', async () => {
    for (let round = 0; round < 8; round++) {
      // Arrange
      const key = `race_${round}`;
      const fieldId = await defineField(key);
      // Act: both at once, the delete started a little later each round.
      const [deleted, created] = await Promise.all([
        later(round * 3, () =>
          client.delete(`/fields/${fieldId}`, { key: org.ownerKey }),
        ),
        segmentNaming(key),
      ]);
      // Assert: exactly one passed, and the other says why.
      const outcome = [deleted.status, created.status];
      expect([
        [200, 400],
        [409, 201],
      ]).toContainEqual(outcome);
      const field = await client.get(`/fields/${fieldId}`, {
        key: org.memberKey,
      });
      if (created.status === 201) {
        expect(deleted.json.code).toBe('field.inUse');
        expect(field.status).toBe(200);
        await client.delete(`/segments/${created.json.data.id}`, {
          key: org.ownerKey,
        });
      } else {
        expect(created.json.details[0].field).toBe('conditions.1.field');
        expect(field.status).toBe(404);
      }
    }
  });

  it('a delete racing a PATCH that makes a segment name the field: never both pass', async () => {
    for (let round = 0; round < 8; round++) {
      // Arrange
      const key = `patch_race_${round}`;
      const fieldId = await defineField(key);
      const segment = await client.post('/segments', {
        key: org.ownerKey,
        body: {
          name: `Race ${round}`,
          listId,
          match: 'all',
          conditions: [{ field: 'email', operator: 'contains', value: '@' }],
        },
      });
      const path = `/segments/${segment.json.data.id}`;
      // Act
      const [deleted, patched] = await Promise.all([
        later(round * 3, () =>
          client.delete(`/fields/${fieldId}`, { key: org.ownerKey }),
        ),
        client.patch(path, {
          key: org.ownerKey,
          body: {
            conditions: [{ field: `fields.${key}`, operator: 'exists' }],
          },
        }),
      ]);
      // Assert
      expect([
        [200, 400],
        [409, 200],
      ]).toContainEqual([deleted.status, patched.status]);
      const read = await client.get(path, { key: org.memberKey });
      expect(read.json.data.conditions[0].field).toBe(
        patched.status === 200 ? `fields.${key}` : 'email',
      );
      await client.delete(path, { key: org.ownerKey });
    }
  });
});
