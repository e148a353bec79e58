/**
 * Custom fields (issue 31, part 1: the definitions) through the pipeline:
 * define, read, relabel, add options, delete; keys unique, a cap of 50,
 * values of the field's type; another organization's field is unknown.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { MAX_FIELDS } from '../../shared/fields/model.ts';
import {
  type ApiClient,
  createApiClient,
  createOrganizationWithKeys,
  type TestOrganization,
} from '../support/api-client.ts';

describe('custom fields, through the pipeline', () => {
  let client: ApiClient;
  let org: TestOrganization;

  beforeAll(async () => {
    client = await createApiClient();
    org = await createOrganizationWithKeys(client, 'Fields');
  });

  const define = (body: object, key = org.ownerKey) =>
    client.post('/fields', { key, body });

  it('defines a field, shows it, lists it newest first; a deleted field retires its key', async () => {
    // Arrange
    const first = await define({
      key: 'company',
      label: 'Company',
      type: 'text',
    });
    // Act
    const plan = await define({
      key: 'level',
      label: 'Plan',
      type: 'option',
      options: ['free', 'pro'],
      defaultValue: 'free',
    });
    const read = await client.get(`/fields/${plan.json.data.id}`, {
      key: org.memberKey,
    });
    const listed = await client.get('/fields', { key: org.memberKey });
    const deleted = await client.delete(`/fields/${first.json.data.id}`, {
      key: org.ownerKey,
    });
    const again = await define({
      key: 'company',
      label: 'Employer',
      type: 'number',
    });
    // Assert
    expect(first.status).toBe(201);
    expect(first.json.data).toMatchObject({
      key: 'company',
      type: 'text',
      options: null,
      defaultValue: null,
    });
    expect(read.json.data).toEqual(plan.json.data);
    expect(read.json.data).toMatchObject({
      options: ['free', 'pro'],
      defaultValue: 'free',
    });
    expect(listed.json.data.map((f: { key: string }) => f.key)).toEqual([
      'level',
      'company',
    ]);
    expect(listed.json.pagination.total).toBe(2);
    expect(deleted.json.data).toEqual({
      id: first.json.data.id,
      key: 'company',
    });
    expect(again.status).toBe(409);
    expect(again.json.code).toBe('field.keyTaken');
    await client.delete(`/fields/${plan.json.data.id}`, { key: org.ownerKey });
  });

  it('a key taken answers 409 field.keyTaken and writes nothing', async () => {
    // Arrange
    const kept = await define({ key: 'city', label: 'City', type: 'text' });
    // Act
    const taken = await define({ key: 'city', label: 'Town', type: 'number' });
    const listed = await client.get('/fields', { key: org.ownerKey });
    // Assert
    expect(taken.status).toBe(409);
    expect(taken.json.code).toBe('field.keyTaken');
    expect(listed.json.pagination.total).toBe(1);
    await client.delete(`/fields/${kept.json.data.id}`, { key: org.ownerKey });
  });

  it('a value must fit the type: 400 naming the field, and an option default among the options', async () => {
    // Act
    const noOptions = await define({
      key: 'tier',
      label: 'Tier',
      type: 'option',
    });
    const badDate = await define({
      key: 'birthday',
      label: 'Birthday',
      type: 'date',
      defaultValue: '2026-02-30',
    });
    const badKey = await define({ key: 'Plan Name', label: 'x', type: 'text' });
    const optionsOfText = await define({
      key: 'nickname',
      label: 'Nickname',
      type: 'text',
      options: ['a'],
    });
    const reserved = await define({
      key: 'constructor',
      label: 'x',
      type: 'text',
    });
    const control = await define({
      key: 'note',
      label: 'Note',
      type: 'text',
      defaultValue: 'a\u0000b',
    });
    const tooSmall = await define({
      key: 'score',
      label: 'Score',
      type: 'number',
      defaultValue: 1e-200,
    });
    const notAnOption = await define({
      key: 'tier',
      label: 'Tier',
      type: 'option',
      options: ['a', 'b'],
      defaultValue: 'c',
    });
    const repeated = await define({
      key: 'tier',
      label: 'Tier',
      type: 'option',
      options: ['a', ' a'],
    });
    const listed = await client.get('/fields', { key: org.ownerKey });
    // Assert
    expect(noOptions.status).toBe(400);
    const fields = (answer: { json: { details: { field: string }[] } }) =>
      answer.json.details.map((d) => d.field);
    expect(fields(noOptions)).toEqual(['options']);
    expect(badDate.status).toBe(400);
    expect(JSON.stringify(badDate.json.details)).toContain('defaultValue');
    expect(badKey.status).toBe(400);
    expect(fields(badKey)).toEqual(['key']);
    expect(fields(reserved)).toEqual(['key']);
    expect(fields(optionsOfText)).toEqual(['options']);
    expect(fields(control)).toEqual(['defaultValue']);
    expect(tooSmall.status).toBe(400);
    expect(fields(tooSmall)).toEqual(['defaultValue']);
    expect(notAnOption.json.code).toBe('field.defaultInvalid');
    expect(fields(notAnOption)).toEqual(['defaultValue']);
    expect(repeated.json.code).toBe('field.optionsRepeated');
    expect(fields(repeated)).toEqual(['options']);
    expect(listed.json.pagination.total).toBe(0);
  });

  it('PATCH relabels, adds options and clears the default; never drops an option nor changes the type', async () => {
    // Arrange
    const plan = await define({
      key: 'package',
      label: 'Plan',
      type: 'option',
      options: ['free', 'pro'],
      defaultValue: 'free',
    });
    const path = `/fields/${plan.json.data.id}`;
    const score = await define({
      key: 'score',
      label: 'Score',
      type: 'number',
    });
    // Act
    const changed = await client.patch(path, {
      key: org.ownerKey,
      body: { label: 'Subscription plan', options: ['free', 'pro', 'team'] },
    });
    const dropped = await client.patch(path, {
      key: org.ownerKey,
      body: { options: ['pro', 'team'] },
    });
    const badDefault = await client.patch(path, {
      key: org.ownerKey,
      body: { defaultValue: 'enterprise' },
    });
    const cleared = await client.patch(path, {
      key: org.ownerKey,
      body: { defaultValue: null },
    });
    const optionsOfNumber = await client.patch(
      `/fields/${score.json.data.id}`,
      {
        key: org.ownerKey,
        body: { options: ['x'] },
      },
    );
    const typeChange = await client.patch(path, {
      key: org.ownerKey,
      body: { type: 'text' },
    });
    const empty = await client.patch(path, { key: org.ownerKey, body: {} });
    // Assert
    expect(changed.json.data).toMatchObject({
      key: 'package',
      label: 'Subscription plan',
      options: ['free', 'pro', 'team'],
      defaultValue: 'free',
    });
    expect(dropped.json.code).toBe('field.optionsKept');
    expect(dropped.json.details).toEqual([
      { field: 'options', message: expect.stringContaining('"free"') },
    ]);
    expect(badDefault.json.code).toBe('field.defaultInvalid');
    expect(cleared.json.data.defaultValue).toBeNull();
    expect(optionsOfNumber.json.code).toBe('field.optionsKept');
    expect(typeChange.status).toBe(400);
    expect(empty.status).toBe(400);
    const read = await client.get(path, { key: org.ownerKey });
    expect(read.json.data).toEqual(cleared.json.data);
    await client.delete(path, { key: org.ownerKey });
    await client.delete(`/fields/${score.json.data.id}`, { key: org.ownerKey });
  });

  it(`an organization defines at most ${MAX_FIELDS} fields: the next is 400 field.limitReached`, async () => {
    // Arrange
    const other = await createOrganizationWithKeys(client, 'Many fields');
    for (let i = 0; i < MAX_FIELDS; i++) {
      const made = await define(
        { key: `f${i}`, label: `Field ${i}`, type: 'boolean' },
        other.ownerKey,
      );
      expect(made.status).toBe(201);
    }
    // Act
    const over = await define(
      { key: 'one_more', label: 'One more', type: 'text' },
      other.ownerKey,
    );
    // Assert
    expect(over.status).toBe(400);
    expect(over.json.code).toBe('field.limitReached');
    const listed = await client.get('/fields?limit=100', {
      key: other.ownerKey,
    });
    expect(listed.json.pagination.total).toBe(MAX_FIELDS);
    expect(
      listed.json.data.some((f: { key: string }) => f.key === 'one_more'),
    ).toBe(false);
  });

  it("another organization's field answers 404 and is left as it was; a member may read but not write (403)", async () => {
    // Arrange
    const mine = await define({ key: 'region', label: 'Region', type: 'text' });
    const other = await createOrganizationWithKeys(client, 'Other fields');
    const path = `/fields/${mine.json.data.id}`;
    // Act
    const read = await client.get(path, { key: other.ownerKey });
    const patched = await client.patch(path, {
      key: other.ownerKey,
      body: { label: 'Theirs' },
    });
    const removed = await client.delete(path, { key: other.ownerKey });
    const byMember = await client.patch(path, {
      key: org.memberKey,
      body: { label: 'Member' },
    });
    // Assert
    expect([read.status, patched.status, removed.status]).toEqual([
      404, 404, 404,
    ]);
    expect(read.json.code).toBe('field.notFound');
    expect(byMember.status).toBe(403);
    const still = await client.get(path, { key: org.ownerKey });
    expect(still.json.data.label).toBe('Region');
    await client.delete(path, { key: org.ownerKey });
  });

  describe('values on contacts', () => {
    let listId: string;
    let planId: string;

    beforeAll(async () => {
      const list = await client.post('/lists', {
        key: org.ownerKey,
        body: { name: 'Field values' },
      });
      listId = list.json.data.id;
      planId = (
        await define({
          key: 'plan',
          label: 'Plan',
          type: 'option',
          options: ['free', 'pro'],
        })
      ).json.data.id;
      await define({ key: 'seats', label: 'Seats', type: 'number' });
      await define({ key: 'renews', label: 'Renews', type: 'date' });
    });

    const add = (body: object) =>
      client.post(`/lists/${listId}/contacts`, {
        key: org.ownerKey,
        body: { doubleOptIn: false, ...body },
      });

    it('an add stores values of the fields, a PATCH changes and removes them; a contact without any shows {}', async () => {
      // Act
      const added = await add({
        email: 'ada@values.example',
        fields: { plan: 'pro', seats: 5 },
      });
      const patched = await client.patch(`/contacts/${added.json.data.id}`, {
        key: org.ownerKey,
        body: { fields: { seats: null, renews: '2027-01-31' } },
      });
      const read = await client.get(`/contacts/${added.json.data.id}`, {
        key: org.memberKey,
      });
      const plain = await add({ email: 'bob@values.example' });
      // Assert
      expect(added.json.data.fields).toEqual({ plan: 'pro', seats: 5 });
      expect(patched.json.data.fields).toEqual({
        plan: 'pro',
        renews: '2027-01-31',
      });
      expect(read.json.data.fields).toEqual(patched.json.data.fields);
      expect(plain.json.data.fields).toEqual({});
      // An add of the same address removing its last value: none left.
      const emptied = await add({
        email: 'ada@values.example',
        fields: { plan: null, renews: null },
      });
      expect(emptied.json.data.fields).toEqual({});
    });

    it('an unknown key or a value of another type is 400 naming fields.<key>, and nothing is written', async () => {
      // Act
      const unknown = await add({
        email: 'cy@values.example',
        fields: { nope: 'x' },
      });
      const wrong = await add({
        email: 'cy@values.example',
        fields: { plan: 'enterprise', seats: 'many', renews: '2027-02-30' },
      });
      const listed = await client.get(
        `/contacts?listId=${listId}&search=cy@values`,
        { key: org.ownerKey },
      );
      // Assert
      expect(unknown.status).toBe(400);
      expect(unknown.json.code).toBe('fields.invalid');
      expect(
        unknown.json.details.map((d: { field: string }) => d.field),
      ).toEqual(['fields.nope']);
      expect(wrong.json.details.map((d: { field: string }) => d.field)).toEqual(
        ['fields.plan', 'fields.seats', 'fields.renews'],
      );
      expect(listed.json.data).toEqual([]);
    });

    it('a key an object cannot safely hold (__proto__, constructor) is 400 naming it, never dropped unseen', async () => {
      // Act: raw JSON, since an object literal's __proto__ sets a prototype.
      const answers = await Promise.all(
        ['__proto__', 'constructor', 'prototype'].map((key) =>
          client.post(`/lists/${listId}/contacts`, {
            key: org.ownerKey,
            rawBody: `{"email":"proto@values.example","fields":{"${key}":"x"}}`,
          }),
        ),
      );
      const listed = await client.get(
        `/contacts?listId=${listId}&search=proto@values`,
        { key: org.ownerKey },
      );
      // Assert
      expect(answers.map((a) => [a.status, a.json.code])).toEqual([
        [400, 'request.invalid'],
        [400, 'request.invalid'],
        [400, 'request.invalid'],
      ]);
      expect(answers.map((a) => a.json.details[0].field)).toEqual([
        'fields.__proto__',
        'fields.constructor',
        'fields.prototype',
      ]);
      expect(listed.json.data).toEqual([]);
    });

    it("a contact's values are bounded (10,000 bytes): past it, 400 naming fields", async () => {
      // Arrange: 11 text fields of 1,000 characters each.
      const other = await createOrganizationWithKeys(client, 'Big values');
      const list = await client.post('/lists', {
        key: other.ownerKey,
        body: { name: 'Big' },
      });
      const values: Record<string, string> = {};
      for (let i = 0; i < 11; i++) {
        await define(
          { key: `note${i}`, label: `Note ${i}`, type: 'text' },
          other.ownerKey,
        );
        values[`note${i}`] = 'x'.repeat(1_000);
      }
      // Act
      const refused = await client.post(
        `/lists/${list.json.data.id}/contacts`,
        {
          key: other.ownerKey,
          body: {
            email: 'big@values.example',
            doubleOptIn: false,
            fields: values,
          },
        },
      );
      // Assert
      expect(refused.status).toBe(400);
      expect(
        refused.json.details.map((d: { field: string }) => d.field),
      ).toEqual(['fields']);
    });

    it('a bulk line with a bad value is rejected in the report (fields.<key>: …); the others keep theirs', async () => {
      // Act
      const answer = await client.post(`/lists/${listId}/contacts/bulk`, {
        key: org.ownerKey,
        body: {
          contacts: [
            { email: 'dee@values.example', fields: { plan: 'free', seats: 2 } },
            { email: 'eve@values.example', fields: { plan: 'gold' } },
            { email: 'dee@values.example', fields: { seats: 3 } },
          ],
        },
      });
      const dee = await client.get(
        `/contacts?listId=${listId}&search=dee@values`,
        { key: org.ownerKey },
      );
      // Assert
      expect(answer.json.data).toMatchObject({
        created: 1,
        updated: 1,
        rejected: 1,
      });
      expect(answer.json.data.errors[0]).toMatchObject({
        index: 1,
        email: 'eve@values.example',
      });
      expect(answer.json.data.errors[0].reason).toMatch(/^fields\.plan: /);
      expect(dee.json.data[0].fields).toEqual({ plan: 'free', seats: 3 });
    });

    it('a field option added later is accepted at once', async () => {
      // Arrange
      await client.patch(`/fields/${planId}`, {
        key: org.ownerKey,
        body: { options: ['free', 'pro', 'team'] },
      });
      // Act
      const added = await add({
        email: 'fay@values.example',
        fields: { plan: 'team' },
      });
      // Assert
      expect(added.json.data.fields).toEqual({ plan: 'team' });
    });

    it("a deleted field's values stay shown but can be removed with null; its key stays retired", async () => {
      // Arrange
      const note = await define({ key: 'memo', label: 'Memo', type: 'text' });
      const added = await add({
        email: 'gus@values.example',
        fields: { memo: 'keep me', seats: 1 },
      });
      await client.delete(`/fields/${note.json.data.id}`, {
        key: org.ownerKey,
      });
      // Act
      const shown = await client.get(`/contacts/${added.json.data.id}`, {
        key: org.ownerKey,
      });
      const set = await client.patch(`/contacts/${added.json.data.id}`, {
        key: org.ownerKey,
        body: { fields: { memo: 'again' } },
      });
      const cleared = await client.patch(`/contacts/${added.json.data.id}`, {
        key: org.ownerKey,
        body: { fields: { memo: null } },
      });
      // Assert
      expect(shown.json.data.fields).toEqual({ memo: 'keep me', seats: 1 });
      expect(set.json.code).toBe('fields.invalid');
      expect(cleared.json.data.fields).toEqual({ seats: 1 });
    });

    it('a text value refuses control characters but keeps line breaks', async () => {
      // Arrange
      await define({ key: 'bio', label: 'Bio', type: 'text' });
      // Act
      const refused = await add({
        email: 'hal@values.example',
        fields: { bio: 'a\u0000b' },
      });
      const kept = await add({
        email: 'hal@values.example',
        fields: { bio: 'line one\nline two' },
      });
      // Assert
      expect(
        refused.json.details.map((d: { field: string }) => d.field),
      ).toEqual(['fields.bio']);
      expect(kept.json.data.fields).toEqual({ bio: 'line one\nline two' });
    });
  });
});
