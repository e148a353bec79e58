import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  isScheduleName,
  scheduleName,
} from '../../../shared/scheduling/ports.ts';

const ORG_ID = '01a20000-0000-7000-8000-000000000001';
const CAMPAIGN_ID = '01a20000-0000-7000-8000-0000000000c1';

describe('schedule names', () => {
  it('joins short plain parts with dots', () => {
    expect(scheduleName('campaign', 'c1')).toBe('campaign.c1');
  });

  it('hashes parts that do not fit, keeping a readable prefix', () => {
    // Act
    const name = scheduleName('campaign', ORG_ID, CAMPAIGN_ID);
    // Assert
    expect(name).toHaveLength(64);
    expect(name).toMatch(/^campaign\.01a20000-0000-7000-8000-/);
    expect(name).toMatch(/\.\.[0-9a-zA-Z_-]{27}$/);
    expect(isScheduleName(name)).toBe(true);
  });

  it('hashes parts with characters a name cannot have', () => {
    // Act
    const name = scheduleName('step', 'a/b c');
    // Assert
    expect(name).toMatch(/^step\.a_b_c\.\.[0-9a-zA-Z_-]{27}$/);
  });

  it('gives the same name for the same parts, and a valid one for any parts', () => {
    fc.assert(
      fc.property(
        fc.array(fc.string(), { minLength: 1, maxLength: 5 }),
        (parts) => {
          const name = scheduleName(...parts);
          expect(isScheduleName(name)).toBe(true);
          expect(scheduleName(...parts)).toBe(name);
        },
      ),
    );
  });

  it('gives distinct names for distinct parts, however they would join', () => {
    // Arrange: the same text joined, and a joined name that looks hashed.
    const hashed = scheduleName('a.b', 'c');
    const pairs = [
      [scheduleName('a.b', 'c'), scheduleName('a', 'b.c')],
      [scheduleName('a', 'b', 'c'), scheduleName('a.b.c')],
      [scheduleName('a_b'), scheduleName('a/b')],
      [hashed, scheduleName(...hashed.split('.').filter(Boolean))],
    ];
    // Assert
    for (const [one, other] of pairs) expect(one).not.toBe(other);
  });

  it('needs a part', () => {
    expect(() => scheduleName()).toThrow('needs a part');
  });

  it.each([
    ['campaign.c1', true],
    ['a'.repeat(64), true],
    ['a'.repeat(65), false],
    ['', false],
    ['a/b', false],
  ])('knows whether %s is a valid name', (name, valid) => {
    expect(isScheduleName(name)).toBe(valid);
  });
});
