/**
 * The import graph of `shared/`, `functions/` and `infra/`, read by
 * dependency-cruiser (type-only imports included: a cycle of types is still
 * a cycle for a reader): no cycle between files, none between areas
 * (`shared/<area>`, each top-level `shared/*.ts`, `functions`, `infra`),
 * the domain never imports the edge, and a function that does one small
 * job never loads what it does not do. Each failure prints its chain.
 */
import {
  cruise,
  type ICruiseResult,
  type IFlattenedRuleSet,
} from 'dependency-cruiser';
import { beforeAll, describe, expect, it } from 'vitest';
import { endpointGroups, pageGroups } from '../../functions/groups.ts';
import { createApiHandler } from '../../shared/http/api-handler.ts';
import { createPublicHandler } from '../../shared/http/public-handler.ts';

// Not the domain: the HTTP, queue and stream edges, the driven adapters, the
// composition roots.
const EDGE_FOLDERS = '(?:http|queue|streams|adapters|runtime)/';

const rules: IFlattenedRuleSet = {
  forbidden: [
    {
      name: 'no-file-cycle',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'domain-imports-edge',
      comment:
        'Domain code never imports the HTTP edge, adapters, runtimes, functions or infra (they import it).',
      severity: 'error',
      from: { path: `^shared/(?!${EDGE_FOLDERS})` },
      to: {
        path: `^(?:shared/${EDGE_FOLDERS}|functions/|infra/)`,
      },
    },
    {
      name: 'domain-imports-deps',
      comment:
        'A domain area takes its own <Area>Deps from its ports.ts; the Deps aggregate is for the edge.',
      severity: 'error',
      from: { path: `^shared/(?!${EDGE_FOLDERS})[^/]+/` },
      to: { path: '^shared/deps\\.ts$' },
    },
    {
      name: 'sequences-import-campaigns',
      comment:
        'A sequence step sends through shared/mail/ like a campaign does; sequences reach campaigns only where a series step is a campaign.',
      severity: 'error',
      from: {
        path: '^shared/sequences/',
        pathNot: '^shared/sequences/series-steps\\.ts$',
      },
      to: { path: '^shared/campaigns/' },
    },
  ],
};

/** `shared/<folder>`, a top-level `shared/<file>`, `functions` or `infra`. */
const areaOf = (file: string): string => {
  const folder = /^shared\/([^/]+)\//.exec(file);
  if (folder) return `shared/${folder[1]}`;
  if (file.startsWith('shared/')) return file.replace(/\.ts$/, '');
  return file.split('/')[0] ?? file;
};

/**
 * The area graph's cycles, from its strongly connected components (Tarjan):
 * for each, its areas and its shortest chain through the first of them
 * (`a → b → a`, with a file import behind every hop).
 */
const areaCycles = (result: ICruiseResult): string[] => {
  // Area edges, each with one file import that makes it.
  const edges = new Map<string, Map<string, string>>();
  for (const module of result.modules) {
    const from = areaOf(module.source);
    for (const dependency of module.dependencies) {
      if (!/^(?:shared|functions|infra)\//.test(dependency.resolved)) continue;
      const to = areaOf(dependency.resolved);
      if (from === to) continue;
      const out = edges.get(from) ?? new Map<string, string>();
      if (!out.has(to))
        out.set(to, `${module.source} → ${dependency.resolved}`);
      edges.set(from, out);
    }
  }

  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const components: string[][] = [];
  const visit = (area: string) => {
    index.set(area, index.size);
    low.set(area, index.get(area) ?? 0);
    stack.push(area);
    for (const next of edges.get(area)?.keys() ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(area, Math.min(low.get(area) ?? 0, low.get(next) ?? 0));
      } else if (stack.includes(next)) {
        low.set(area, Math.min(low.get(area) ?? 0, index.get(next) ?? 0));
      }
    }
    if (low.get(area) === index.get(area)) {
      const component: string[] = [];
      let member: string | undefined;
      do {
        member = stack.pop();
        if (member) component.push(member);
      } while (member && member !== area);
      if (component.length > 1) components.push(component);
    }
  };
  for (const area of edges.keys()) if (!index.has(area)) visit(area);

  // One shortest cycle through the first area of each component.
  return components.map((component) => {
    const [start = ''] = component.sort();
    const previous = new Map<string, string>();
    const queue = [start];
    let last: string | undefined;
    while (queue.length > 0 && !last) {
      const area = queue.shift() ?? '';
      for (const next of edges.get(area)?.keys() ?? []) {
        if (!component.includes(next)) continue;
        if (next === start) {
          last = area;
          break;
        }
        if (!previous.has(next)) {
          previous.set(next, area);
          queue.push(next);
        }
      }
    }
    const chain = [start];
    for (let area = last; area && area !== start; area = previous.get(area)) {
      chain.splice(1, 0, area);
    }
    chain.push(start);
    const hops = chain
      .slice(1)
      .map((to, i) => `    ${edges.get(chain[i] ?? '')?.get(to)}`);
    return [
      `areas in one cycle: ${component.join(', ')}`,
      `  shortest through ${start}: ${chain.join(' → ')}`,
      ...hops,
    ].join('\n');
  });
};

/**
 * What a function's cold start must not load: from its entry, the imports
 * a bundle keeps (type-only and dynamic ones aside) never reach these.
 */
const NEVER_LOADED: readonly {
  entry: string;
  why: string;
  modules: RegExp;
}[] = [
  {
    entry: 'functions/contact-changes/lambda.ts',
    why: 'the `contacts` stream consumer enrols contacts and sends nothing: no step runner, no rendering engine, no Liquid',
    modules:
      /^shared\/sequences\/run-step\.ts$|^shared\/rendering\/|(?:^|\/)node_modules\/liquidjs\//,
  },
  {
    entry: 'functions/journeys/lambda.ts',
    why: 'the `journeys` stream consumer schedules, resumes and cleans up: no campaign send, no step runner, no rendering engine, no Liquid',
    modules:
      /^shared\/campaigns\/(?:send|dispatch|deliver)\.ts$|^shared\/sequences\/(?:run-step|series-steps)\.ts$|^shared\/rendering\/|(?:^|\/)node_modules\/liquidjs\//,
  },
];

/**
 * The shortest chain from `entry` to each module matching `modules`, by
 * the imports a bundle keeps: neither type-only nor dynamic ones.
 */
const loadChains = (
  result: ICruiseResult,
  entry: string,
  modules: RegExp,
): string[] => {
  const bySource = new Map(result.modules.map((m) => [m.source, m]));
  const previous = new Map<string, string>();
  const queue = [entry];
  const seen = new Set(queue);
  const chains: string[] = [];
  while (queue.length > 0) {
    const file = queue.shift() ?? '';
    if (modules.test(file)) {
      const chain = [file];
      for (let at = previous.get(file); at; at = previous.get(at)) {
        chain.unshift(at);
      }
      chains.push(chain.join(' → '));
      continue;
    }
    for (const dependency of bySource.get(file)?.dependencies ?? []) {
      if (dependency.typeOnly || dependency.dynamic) continue;
      if (seen.has(dependency.resolved)) continue;
      seen.add(dependency.resolved);
      previous.set(dependency.resolved, file);
      queue.push(dependency.resolved);
    }
  }
  return chains;
};

describe('the import graph', () => {
  let result: ICruiseResult;

  beforeAll(async () => {
    const { output } = await cruise(['shared', 'functions', 'infra'], {
      validate: true,
      ruleSet: rules,
      // Anywhere in the path: a worktree's node_modules may be a link to
      // another checkout's, which resolves outside the repository.
      doNotFollow: { path: '(^|/)node_modules/' },
      tsPreCompilationDeps: true,
    });
    if (typeof output === 'string') throw new Error('expected a cruise result');
    result = output;
  });

  it('reads every source file, type-only imports included', () => {
    // Arrange
    const deps = result.modules.find((m) => m.source === 'shared/deps.ts');

    // Act
    const imported = deps?.dependencies.map((d) => d.resolved) ?? [];

    // Assert
    expect(result.summary.totalCruised).toBeGreaterThan(100);
    expect(imported).toContain('shared/audience/ports.ts');
  });

  it('has no cycle between files', () => {
    // Arrange
    const violations = result.summary.violations.filter(
      (v) => v.rule.name === 'no-file-cycle',
    );

    // Act
    const chains = [
      ...new Set(
        violations.map((v) =>
          [v.from, ...(v.cycle ?? []).map((c) => c.name)].join(' → '),
        ),
      ),
    ];

    // Assert
    expect(chains).toEqual([]);
  });

  it('has no cycle between areas', () => {
    // Act
    const cycles = areaCycles(result);

    // Assert
    expect(cycles).toEqual([]);
  });

  it("imports, in each group's Lambda entry, the pipeline its declaration names and no other", () => {
    // Arrange: where each pipeline is defined.
    const groups = [...endpointGroups, ...pageGroups];
    const pipelines = new Map<unknown, string>([
      [createApiHandler, 'shared/http/api-handler.ts'],
      [createPublicHandler, 'shared/http/public-handler.ts'],
    ]);

    // Act
    const imported = groups.map((group) => {
      const entry = result.modules.find((m) => m.source === group.entry);
      const resolved = entry?.dependencies.map((d) => d.resolved) ?? [];
      return [
        group.name,
        [...pipelines.values()].filter((file) => resolved.includes(file)),
      ];
    });

    // Assert
    expect(imported).toEqual(
      groups.map((group) => [group.name, [pipelines.get(group.pipeline)]]),
    );
  });

  it('keeps the domain off the edge and off the Deps aggregate; sequences off campaigns but for series steps', () => {
    // Act
    const imports = result.summary.violations
      .filter((v) => v.rule.name !== 'no-file-cycle')
      .map((v) => `${v.rule.name}: ${v.from} → ${v.to}`);

    // Assert
    expect(imports).toEqual([]);
  });

  it('keeps out of a small function what it does not do', () => {
    // Arrange
    const sources = new Set(result.modules.map((m) => m.source));

    // Act
    const loaded = NEVER_LOADED.flatMap(({ entry, why, modules }) =>
      loadChains(result, entry, modules).map((chain) => `${why}: ${chain}`),
    );

    // Assert
    for (const { entry } of NEVER_LOADED) expect(sources).toContain(entry);
    expect(loaded).toEqual([]);
  });

  it('sees through to what a function loads (the check above can fail)', () => {
    // Act
    const chains = loadChains(
      result,
      'functions/steps/lambda.ts',
      /^shared\/sequences\/run-step\.ts$|^shared\/rendering\/engine\.ts$/,
    );

    // Assert
    expect(chains).toHaveLength(2);
  });
});
