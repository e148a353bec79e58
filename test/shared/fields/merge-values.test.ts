import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  prepareFieldMerge,
  shownNumber,
} from '../../../shared/fields/merge-values.ts';
import { aField } from '../../support/fields.ts';

describe('custom field merge values', () => {
  it('shows the contact’s value by type: text and option as written, a number and a boolean as themselves, a date as YYYY-MM-DD', () => {
    // Arrange
    const merge = prepareFieldMerge([
      aField({ key: 'company', type: 'text' }),
      aField({ key: 'plan', type: 'option', options: ['free', 'pro'] }),
      aField({ key: 'seats', type: 'number' }),
      aField({ key: 'vip', type: 'boolean' }),
      aField({ key: 'renewal', type: 'date' }),
    ]);
    // Act
    const values = merge({
      company: '<b>&"',
      plan: 'pro',
      seats: 9007199254740991,
      vip: false,
      renewal: '2027-02-28',
    });
    // Assert
    expect(values).toEqual({
      company: '<b>&"',
      plan: 'pro',
      seats: 9007199254740991,
      vip: false,
      renewal: '2027-02-28',
    });
  });

  it('falls back to the field’s default, else leaves the key out (so Liquid’s default filter applies); an empty text is no value', () => {
    // Arrange
    const merge = prepareFieldMerge([
      aField({ key: 'plan', type: 'text', defaultValue: 'free' }),
      aField({ key: 'seats', type: 'number', defaultValue: 1 }),
      aField({ key: 'vip', type: 'boolean', defaultValue: false }),
      aField({ key: 'company', type: 'text' }),
    ]);
    // Act, Assert
    expect(merge(undefined)).toEqual({ plan: 'free', seats: 1, vip: false });
    expect(merge({ plan: '', company: '' })).toEqual({
      plan: 'free',
      seats: 1,
      vip: false,
    });
    expect(merge({ plan: 'pro', seats: 0, vip: true })).toEqual({
      plan: 'pro',
      seats: 0,
      vip: true,
    });
  });

  it('never shows a value whose key no field defines (a deleted field’s), nor one of another type than its field’s', () => {
    // Arrange
    const merge = prepareFieldMerge([
      aField({ key: 'seats', type: 'number', defaultValue: 3 }),
      aField({ key: 'vip', type: 'boolean' }),
    ]);
    // Act
    const values = merge({ gone: 'old', seats: 'ten', vip: 'yes' });
    // Assert
    expect(values).toEqual({ seats: 3 });
  });

  it('prints a number without an exponent: integers as they are, a magnitude below 1e-6 in full decimals', () => {
    expect(shownNumber(9007199254740991)).toBe(9007199254740991);
    expect(shownNumber(-42)).toBe(-42);
    expect(shownNumber(0.5)).toBe(0.5);
    expect(shownNumber(0.000001)).toBe(0.000001);
    expect(shownNumber(1.5e-7)).toBe('0.00000015');
    expect(shownNumber(-2e-9)).toBe('-0.000000002');
    expect(shownNumber(1e-130)).toBe(`0.${'0'.repeat(129)}1`);
  });

  it('prints every number of a field’s range as the same number, never with an exponent (property)', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.double({ min: 1e-130, max: Number.MAX_SAFE_INTEGER, noNaN: true }),
          fc.double({
            min: -Number.MAX_SAFE_INTEGER,
            max: -1e-130,
            noNaN: true,
          }),
          fc.integer({
            min: -Number.MAX_SAFE_INTEGER,
            max: Number.MAX_SAFE_INTEGER,
          }),
        ),
        (n) => {
          const printed = String(shownNumber(n));
          expect(printed).not.toMatch(/e/i);
          expect(Number(printed)).toBe(n);
        },
      ),
    );
  });
});
