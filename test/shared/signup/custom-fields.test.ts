/**
 * The custom fields a sign-up page asks (issue 31): checked against the
 * organization's fields when a page is written, drawn only while the same
 * field exists, and their values read from a submitted form by type, with
 * a stranger's text refused as a name is.
 */
import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../../shared/errors.ts';
import type { Field } from '../../../shared/fields/model.ts';
import { valuesSizeIssue } from '../../../shared/fields/values.ts';
import {
  askedFieldsOf,
  customInputsOf,
  MAX_FORM_TEXT_CHARS,
} from '../../../shared/signup/custom-fields.ts';
import { readCustomFields } from '../../../shared/signup/custom-values.ts';
import type { CustomInput } from '../../../shared/signup/page-model.ts';

const field = (
  key: string,
  type: Field['type'],
  extra: Partial<Field> = {},
): Field => ({
  id: `id-${key}`,
  key,
  label: key[0]?.toUpperCase() + key.slice(1),
  type,
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:00.000Z',
  ...extra,
});

const DEFINITIONS = new Map(
  [
    field('company', 'text'),
    field('seats', 'number'),
    field('birthday', 'date'),
    field('vip', 'boolean'),
    field('plan', 'option', { options: ['free', 'pro'] }),
  ].map((f) => [f.key, f]),
);

const input = (
  key: string,
  type: CustomInput['type'],
  required = false,
  options?: string[],
): CustomInput => ({
  key,
  label: `The ${key}`,
  type,
  required,
  ...(options ? { options } : {}),
});

const issuesOf = (run: () => unknown) => {
  try {
    run();
  } catch (error) {
    if (error instanceof ValidationError) return error.details;
    throw error;
  }
  throw new Error('expected a ValidationError');
};

describe('the custom fields a page asks', () => {
  it('keeps each key with the id of its field, required false by default, the label only when given', () => {
    // Act
    const asked = askedFieldsOf(DEFINITIONS, [
      { key: 'plan', required: true },
      { key: 'company', required: false, label: 'Your company' },
    ]);
    // Assert
    expect(asked).toEqual([
      { fieldId: 'id-plan', key: 'plan', required: true },
      {
        fieldId: 'id-company',
        key: 'company',
        required: false,
        label: 'Your company',
      },
    ]);
  });

  it('refuses an unknown and a repeated key, naming each customFields.<i>.key', () => {
    // Act
    const issues = issuesOf(() =>
      askedFieldsOf(DEFINITIONS, [
        { key: 'company', required: false },
        { key: 'nickname', required: false },
        { key: 'company', required: true },
      ]),
    );
    // Assert
    expect(issues).toEqual([
      {
        field: 'customFields.1.key',
        message: 'is not a field of the organization (see GET /fields)',
      },
      { field: 'customFields.2.key', message: 'is asked twice' },
    ]);
  });

  it('draws only the fields that still exist — the same field, not another that took its key — with the page’s label or the field’s', () => {
    // Arrange
    const asked = askedFieldsOf(DEFINITIONS, [
      { key: 'company', required: false, label: 'Employer' },
      { key: 'plan', required: true },
      { key: 'seats', required: false },
    ]);
    const later = new Map(DEFINITIONS);
    later.delete('seats');
    later.set('plan', field('plan', 'text', { id: 'another-id' }));
    // Act
    const inputs = customInputsOf(asked, later);
    // Assert
    expect(inputs).toEqual([
      { key: 'company', label: 'Employer', type: 'text', required: false },
    ]);
    expect(customInputsOf(undefined, DEFINITIONS)).toEqual([]);
  });
});

describe('values read from a submitted form', () => {
  const INPUTS = [
    input('company', 'text'),
    input('seats', 'number'),
    input('birthday', 'date'),
    input('vip', 'boolean'),
    input('plan', 'option', false, ['free', 'pro']),
  ];

  it('reads each type: a one-line text trimmed, a number, a date, a ticked box, an option; other fields.* inputs are ignored', () => {
    // Act
    const read = readCustomFields(INPUTS, {
      'fields.company': '  Acme Ltd ',
      'fields.seats': '12.5',
      'fields.birthday': '1990-02-28',
      'fields.vip': 'true',
      'fields.plan': 'pro',
      'fields.secret': 'not asked',
      email: 'ann@example.test',
    });
    // Assert
    expect(read.state.errors).toEqual({});
    expect(read.values).toEqual({
      company: 'Acme Ltd',
      seats: 12.5,
      birthday: '1990-02-28',
      vip: true,
      plan: 'pro',
    });
  });

  it('keeps no value for an optional input left empty, and false for an unticked box (the visitor answered no)', () => {
    // Act
    const read = readCustomFields(INPUTS, { 'fields.company': '   ' });
    // Assert
    expect(read.state.errors).toEqual({});
    expect(read.values).toEqual({ vip: false });
  });

  it('refuses a required input left empty, an unticked required box and no choice, naming the field by its label', () => {
    // Act
    const read = readCustomFields(
      [
        input('company', 'text', true),
        input('vip', 'boolean', true),
        input('plan', 'option', true, ['free', 'pro']),
      ],
      {},
    );
    // Assert
    expect(read.state.errors).toEqual({
      company: 'The company: this is required.',
      vip: 'The vip: tick this box to continue.',
      plan: 'The plan: choose one of the options.',
    });
    expect(read.values).toEqual({});
  });

  it.each([
    ['company', 'text', 'x'.repeat(MAX_FORM_TEXT_CHARS + 1), 'use at most 255'],
    ['company', 'text', 'two\nlines', 'use at most 255'],
    ['company', 'text', 'Visit https://evil.example/win', 'no web or email'],
    ['company', 'text', 'claim at evil.com/win', 'no web or email'],
    ['company', 'text', 'Call +1 (555) 123-4567', 'no web or email'],
    ['company', 'text', 'write to win@evil', 'no web or email'],
    ['seats', 'number', 'twelve', 'enter a number'],
    ['seats', 'number', '1e400', 'enter a number'],
    ['seats', 'number', '0x10', 'enter a number'],
    ['seats', 'number', '9007199254740992', 'enter a number'],
    ['birthday', 'date', '2026-02-30', 'enter a date that exists'],
    ['birthday', 'date', '31/12/2026', 'enter a date that exists'],
    ['plan', 'option', 'enterprise', 'choose one of the options'],
  ])('refuses %s (%s) %j, saying what to do', (key, _type, typed, message) => {
    // Act
    const read = readCustomFields(INPUTS, { [`fields.${key}`]: typed });
    // Assert
    expect(read.state.errors[key]).toContain(message);
    expect(read.state.errors[key]).toMatch(new RegExp(`^The ${key}: `));
    expect(read.values[key]).toBeUndefined();
    // What was typed is shown again.
    expect(read.state.values[key]).toBe(typed.slice(0, 1020));
  });

  it('takes a text of 255 characters, and ten of them stay within a contact’s 10,000 bytes of values', () => {
    // Arrange: the widest characters a code unit carries (3 bytes each).
    const text = '€'.repeat(MAX_FORM_TEXT_CHARS);
    const keys = Array.from({ length: 10 }, (_, i) => `k${i}`.padEnd(40, 'x'));
    // Act
    const read = readCustomFields(
      keys.map((key) => input(key, 'text')),
      Object.fromEntries(keys.map((key) => [`fields.${key}`, text])),
    );
    // Assert
    expect(read.state.errors).toEqual({});
    expect(Object.keys(read.values)).toHaveLength(10);
    expect(valuesSizeIssue(undefined, read.values)).toBeUndefined();
  });
});
