/**
 * DynamoDB expressions as data: conditions and updates are built from
 * attribute paths and values, and compiled into the expression strings
 * with their `#name` and `:value` placeholders. No adapter writes a
 * placeholder by hand; the compiler gives each attribute name and each
 * value its own, so no two parts of a request can collide.
 *
 * Paths are attribute names, or dotted paths into a map attribute
 * (`progress.sent`, `usedBy.<seriesId>`): every segment is a name of its
 * own, so a segment may hold any character but a dot.
 */

/** A comparison DynamoDB evaluates in a condition. */
export type Comparator = '=' | '<>' | '<' | '<=' | '>' | '>=';

/** A condition on an item, compiled by `compileCondition`. */
export type Condition =
  | { kind: 'exists' | 'missing'; path: string }
  | { kind: 'compare'; path: string; op: Comparator; value: unknown }
  | { kind: 'between'; path: string; low: unknown; high: unknown }
  | { kind: 'in'; path: string; values: readonly unknown[] }
  | { kind: 'contains' | 'beginsWith'; path: string; value: unknown }
  | { kind: 'size'; path: string; op: Comparator; value: number }
  | { kind: 'and' | 'or'; of: readonly Condition[] }
  | { kind: 'not'; of: Condition };

/** The attributes of an item type that may hold a map of further values. */
type MapKeys<A> = {
  [K in keyof A & string]-?: NonNullable<A[K]> extends readonly unknown[]
    ? never
    : NonNullable<A[K]> extends Set<unknown>
      ? never
      : NonNullable<A[K]> extends object
        ? K
        : never;
}[keyof A & string];

/**
 * A path into an item of attributes `A`: one of its attributes, a key
 * attribute, or a dotted path into one of its maps.
 */
export type PathOf<A> =
  | (keyof A & string)
  | 'PK'
  | 'SK'
  | `${MapKeys<A>}.${string}`;

/** The value at a path: the attribute's type, unknown inside a map. */
export type ValueAt<A, P> = P extends keyof A
  ? NonNullable<A[P]>
  : P extends 'PK' | 'SK'
    ? string
    : unknown;

/** Builds conditions on the attributes of an item type `A`. */
export interface Where<A> {
  /** The attribute exists; without a path, the item exists. */
  exists(path?: PathOf<A>): Condition;
  /** The attribute is absent; without a path, the item is absent. */
  missing(path?: PathOf<A>): Condition;
  eq<P extends PathOf<A>>(path: P, value: ValueAt<A, P>): Condition;
  ne<P extends PathOf<A>>(path: P, value: ValueAt<A, P>): Condition;
  lt<P extends PathOf<A>>(path: P, value: ValueAt<A, P>): Condition;
  le<P extends PathOf<A>>(path: P, value: ValueAt<A, P>): Condition;
  gt<P extends PathOf<A>>(path: P, value: ValueAt<A, P>): Condition;
  ge<P extends PathOf<A>>(path: P, value: ValueAt<A, P>): Condition;
  between<P extends PathOf<A>>(
    path: P,
    low: ValueAt<A, P>,
    high: ValueAt<A, P>,
  ): Condition;
  in<P extends PathOf<A>>(path: P, values: readonly ValueAt<A, P>[]): Condition;
  /** A string attribute contains a substring, a set or list an element. */
  contains(path: PathOf<A>, value: unknown): Condition;
  beginsWith(path: PathOf<A>, prefix: string): Condition;
  /** Compares the size of a string, set, list or map. */
  size(path: PathOf<A>, op: Comparator, value: number): Condition;
  and(...of: (Condition | false | undefined)[]): Condition;
  or(...of: (Condition | false | undefined)[]): Condition;
  not(of: Condition): Condition;
}

const compare =
  (op: Comparator) =>
  (path: string, value: unknown): Condition => ({
    kind: 'compare',
    path,
    op,
    value,
  });

const present = (of: (Condition | false | undefined)[]) =>
  of.filter((c): c is Condition => Boolean(c));

/**
 * The condition builder. Typed per item type through `whereOf<A>()`; this
 * untyped one serves filters on items of several types.
 */
export const where: Where<Record<string, unknown>> = {
  exists: (path = 'PK') => ({ kind: 'exists', path }),
  missing: (path = 'PK') => ({ kind: 'missing', path }),
  eq: compare('='),
  ne: compare('<>'),
  lt: compare('<'),
  le: compare('<='),
  gt: compare('>'),
  ge: compare('>='),
  between: (path, low, high) => ({ kind: 'between', path, low, high }),
  in: (path, values) => ({ kind: 'in', path, values }),
  contains: (path, value) => ({ kind: 'contains', path, value }),
  beginsWith: (path, value) => ({ kind: 'beginsWith', path, value }),
  size: (path, op, value) => ({ kind: 'size', path, op, value }),
  and: (...of) => ({ kind: 'and', of: present(of) }),
  or: (...of) => ({ kind: 'or', of: present(of) }),
  not: (of) => ({ kind: 'not', of }),
};

/** The condition builder for the attributes of an item type. */
export const whereOf = <A>(): Where<A> => where as unknown as Where<A>;

/** A value computed by DynamoDB when the update applies. */
export class Computed {
  private constructor(
    readonly kind: 'ifMissing' | 'plus',
    readonly operand: unknown,
  ) {}

  /** The attribute keeps its value; set to `value` only when absent. */
  static ifMissing(value: unknown): Computed {
    return new Computed('ifMissing', value);
  }

  /** The attribute's value plus `by` (the attribute must exist). */
  static plus(by: number): Computed {
    return new Computed('plus', by);
  }
}

/** `SET a = if_not_exists(a, value)`: keeps a value already there. */
export const ifMissing = <T>(value: T): T =>
  Computed.ifMissing(value) as unknown as T;

/** `SET a = a + by`: moves a number that must exist (unlike `add`). */
export const plus = (by: number): number =>
  Computed.plus(by) as unknown as number;

/** The attributes of `A` whose values `ADD` and `DELETE` can move. */
type Addable<A> = {
  [K in keyof A & string]-?: NonNullable<A[K]> extends number | Set<unknown>
    ? K
    : never;
}[keyof A & string];

/** Nested paths: a dotted path into a map attribute of `A`. */
type Nested<A> = `${MapKeys<A>}.${string}`;

/**
 * An update of an item of attributes `A`. `set` skips undefined values (a
 * partial of the attributes sets what it names); `remove` removes.
 * `ifMissing(v)` and `plus(n)` compute a value at the update.
 */
export interface Update<A> {
  set?: { [K in keyof A]?: A[K] } & { [P in Nested<A>]?: unknown };
  /** Adds to a number (absent: from 0) or adds elements to a set. */
  add?: { [K in Addable<A>]?: A[K] } & { [P in Nested<A>]?: number };
  remove?: readonly PathOf<A>[];
  /** Removes elements from a set. */
  delete?: { [K in Addable<A>]?: A[K] };
}

/** Compiled expressions and the placeholders they use. */
export interface Compiled {
  expression: string;
  names: Record<string, string>;
  values: Record<string, unknown>;
}

/**
 * The placeholders of one request: the update, the condition and any
 * projection share them, each name and each value given its own.
 */
export class Placeholders {
  private readonly byName = new Map<string, string>();
  readonly values: Record<string, unknown> = {};
  private valueCount = 0;

  /** The placeholder path of a dotted path: `#n0.#n1`. */
  path(path: string): string {
    return path
      .split('.')
      .map((segment) => {
        let placeholder = this.byName.get(segment);
        if (!placeholder) {
          placeholder = `#n${this.byName.size}`;
          this.byName.set(segment, placeholder);
        }
        return placeholder;
      })
      .join('.');
  }

  value(value: unknown): string {
    const placeholder = `:v${this.valueCount++}`;
    this.values[placeholder] = value;
    return placeholder;
  }

  get names(): Record<string, string> {
    return Object.fromEntries(
      [...this.byName].map(([name, placeholder]) => [placeholder, name]),
    );
  }
}

const conditionText = (c: Condition, p: Placeholders): string => {
  switch (c.kind) {
    case 'exists':
      return `attribute_exists(${p.path(c.path)})`;
    case 'missing':
      return `attribute_not_exists(${p.path(c.path)})`;
    case 'compare':
      return `${p.path(c.path)} ${c.op} ${p.value(c.value)}`;
    case 'between':
      return `${p.path(c.path)} BETWEEN ${p.value(c.low)} AND ${p.value(c.high)}`;
    case 'in':
      if (!c.values.length) throw new Error(`IN needs values (${c.path})`);
      return `${p.path(c.path)} IN (${c.values.map((v) => p.value(v)).join(', ')})`;
    case 'contains':
      return `contains(${p.path(c.path)}, ${p.value(c.value)})`;
    case 'beginsWith':
      return `begins_with(${p.path(c.path)}, ${p.value(c.value)})`;
    case 'size':
      return `size(${p.path(c.path)}) ${c.op} ${p.value(c.value)}`;
    case 'and':
    case 'or': {
      if (!c.of.length) throw new Error(`${c.kind.toUpperCase()} of nothing`);
      if (c.of.length === 1) return conditionText(c.of[0] as Condition, p);
      const glue = c.kind === 'and' ? ' AND ' : ' OR ';
      return c.of.map((part) => `(${conditionText(part, p)})`).join(glue);
    }
    case 'not':
      return `NOT (${conditionText(c.of, p)})`;
  }
};

/** The text of a condition, its placeholders added to `p`. */
export const compileCondition = (c: Condition, p: Placeholders): string =>
  conditionText(c, p);

/** A condition alone (a query's filter), with its own placeholders. */
export const compileFilter = (c: Condition): Compiled => {
  const p = new Placeholders();
  const expression = compileCondition(c, p);
  return { expression, names: p.names, values: p.values };
};

const defined = (entries: object | undefined) =>
  Object.entries(entries ?? {}).filter(([, value]) => value !== undefined);

/**
 * The text of an update, its placeholders added to `p`. Throws on an
 * update that changes nothing (DynamoDB would refuse it less clearly).
 */
export const compileUpdate = <A>(u: Update<A>, p: Placeholders): string => {
  const set = defined(u.set).map(([path, value]) => {
    const at = p.path(path);
    if (!(value instanceof Computed)) return `${at} = ${p.value(value)}`;
    return value.kind === 'ifMissing'
      ? `${at} = if_not_exists(${at}, ${p.value(value.operand)})`
      : `${at} = ${at} + ${p.value(value.operand)}`;
  });
  const add = defined(u.add).map(
    ([path, value]) => `${p.path(path)} ${p.value(value)}`,
  );
  const remove = (u.remove ?? []).map((path) => p.path(path));
  const del = defined(u.delete).map(
    ([path, value]) => `${p.path(path)} ${p.value(value)}`,
  );
  const clauses = [
    set.length ? `SET ${set.join(', ')}` : '',
    add.length ? `ADD ${add.join(', ')}` : '',
    remove.length ? `REMOVE ${remove.join(', ')}` : '',
    del.length ? `DELETE ${del.join(', ')}` : '',
  ].filter(Boolean);
  if (!clauses.length) throw new Error('An update that changes nothing');
  return clauses.join(' ');
};

/** The projection of the given paths, its names added to `p`. */
export const compileProjection = (
  paths: readonly string[],
  p: Placeholders,
): string => paths.map((path) => p.path(path)).join(', ');
