import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, test } from 'node:test';
import ts from 'typescript';

/**
 * Dependencies point inward: the core is pure (no node:*, no packages, nothing outside core/);
 * the outer layers import the core and not each other, except the agent (which saves through the
 * session store), the chat application (which runs the agent on a session store) and the CLI (the
 * composition root). Static imports, re-exports, side-effect imports, dynamic `import()` and
 * `import('…')` types all count; a dynamic import whose specifier is not a string literal cannot
 * be checked, so outside the CLI it is refused. Only the CLI reads the process's argv, environment,
 * working directory and standard streams; the other layers are handed them. No module is loaded
 * again by a module it loads (no import cycles at run time).
 */
const root = new URL('../src/', import.meta.url).pathname;
const allowed: Record<string, string[]> = {
  core: ['core'],
  session: ['core', 'session'],
  emulator: ['core', 'emulator'],
  http: ['core', 'http'],
  agent: ['core', 'session', 'agent'],
  // The chat application runs the agent on a session store; never the proxy, the emulator or the CLI.
  chat: ['core', 'session', 'agent', 'chat'],
};

/**
 * The network carriers: node's HTTP/TCP stacks and undici are imported only by the node adapters,
 * which live in CARRIER_FOLDER.
 */
const CARRIER_MODULES = /^(?:node:)?(?:http|https|http2|net|tls)$|^undici(?:\/|$)/;
const CARRIER_FOLDER = 'http/node/';
const CARRIERS = `${CARRIER_FOLDER}**`;
const isCarrier = (path: string): boolean => path.startsWith(CARRIER_FOLDER);
/**
 * Folders a layer may import besides its own allowed layers: the emulator is served by the shared
 * node carrier (http/node/serve-handler.ts), not a copy of it, and imports nothing else of http/.
 */
const CARRIER_EDGES: Record<string, string[]> = { emulator: ['http/node/'] };

/** What only the composition root reads of the process: `process.env`, `process.stdout`, … */
const PROCESS_IO = new Set(['argv', 'env', 'stdin', 'stdout', 'stderr', 'cwd', 'chdir', 'exit', 'exitCode']);

interface Import {
  readonly specifier: string | undefined; // undefined: a dynamic import of a computed specifier
  readonly line: number;
  readonly dynamic: boolean;
  /** `import type`, `export type`, `import('…')` types: erased, never loaded at run time. */
  readonly typeOnly: boolean;
}

/** Every module a file imports, read from the TypeScript syntax tree (comments and strings never match). */
function importsOf(path: string, source: string): Import[] {
  const file = ts.createSourceFile(path, source, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const found: Import[] = [];
  const add = (node: ts.Node, specifier: ts.Node | undefined, dynamic: boolean, typeOnly = false): void => {
    const line = file.getLineAndCharacterOfPosition(node.getStart(file)).line + 1;
    found.push({
      specifier: specifier !== undefined && ts.isStringLiteralLike(specifier) ? specifier.text : undefined,
      line,
      dynamic,
      typeOnly,
    });
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node)) add(node, node.moduleSpecifier, false, node.importClause?.isTypeOnly === true);
    else if (ts.isExportDeclaration(node) && node.moduleSpecifier !== undefined)
      add(node, node.moduleSpecifier, false, node.isTypeOnly);
    else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference))
      add(node, node.moduleReference.expression, false, node.isTypeOnly);
    else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword)
      add(node, node.arguments[0], true);
    else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument))
      add(node, node.argument.literal, false, true);
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

/**
 * Where a file reads PROCESS_IO of the process: `process.env`, `process['argv']`, `const { env } = process`,
 * and the same through `node:process` (`import { env } from 'node:process'`, or the module under any name).
 */
function processIoOf(path: string, source: string): { name: string; line: number }[] {
  const file = ts.createSourceFile(path, source, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const names = new Set(['process']);
  const found: { name: string; line: number }[] = [];
  const add = (node: ts.Node, name: string): void => {
    if (PROCESS_IO.has(name))
      found.push({ name, line: file.getLineAndCharacterOfPosition(node.getStart(file)).line + 1 });
  };
  const isProcess = (node: ts.Node): boolean =>
    (ts.isIdentifier(node) && names.has(node.text)) ||
    (ts.isPropertyAccessExpression(node) &&
      node.name.text === 'process' &&
      ts.isIdentifier(node.expression) &&
      node.expression.text === 'globalThis');
  for (const statement of file.statements) {
    if (!ts.isImportDeclaration(statement) || !ts.isStringLiteral(statement.moduleSpecifier)) continue;
    if (!/^(?:node:)?process$/.test(statement.moduleSpecifier.text)) continue;
    const clause = statement.importClause;
    if (clause?.name !== undefined) names.add(clause.name.text);
    const bindings = clause?.namedBindings;
    if (bindings !== undefined && ts.isNamespaceImport(bindings)) names.add(bindings.name.text);
    if (bindings !== undefined && ts.isNamedImports(bindings))
      for (const element of bindings.elements) add(element, (element.propertyName ?? element.name).text);
  }
  const visit = (node: ts.Node): void => {
    if (ts.isPropertyAccessExpression(node) && isProcess(node.expression)) add(node, node.name.text);
    else if (
      ts.isElementAccessExpression(node) &&
      isProcess(node.expression) &&
      ts.isStringLiteralLike(node.argumentExpression)
    )
      add(node, node.argumentExpression.text);
    else if (
      ts.isVariableDeclaration(node) &&
      ts.isObjectBindingPattern(node.name) &&
      node.initializer !== undefined &&
      isProcess(node.initializer)
    ) {
      for (const element of node.name.elements) {
        const key = element.propertyName ?? element.name;
        if (ts.isIdentifier(key) || ts.isStringLiteralLike(key)) add(element, key.text);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

/** What is wrong with one file under src/ (`path` relative to src/), one line per problem. */
function problemsOf(path: string, source: string): string[] {
  const problems: string[] = [];
  const layer = path.split('/')[0] as string;
  const permitted = allowed[layer]; // undefined: cli/, index.ts, the composition root
  for (const { specifier, line, dynamic } of importsOf(path, source)) {
    const how = dynamic ? 'dynamically imports' : 'imports';
    if (specifier === undefined) {
      if (permitted !== undefined)
        problems.push(
          `${path}:${line} dynamically imports a computed specifier, which cannot be checked (${layer} may import ${permitted.join(', ')})`,
        );
      continue;
    }
    if (CARRIER_MODULES.test(specifier) && !isCarrier(path)) {
      problems.push(`${path}:${line} ${how} '${specifier}': only the node carriers (${CARRIERS}) may`);
    }
    if (permitted === undefined) continue;
    if (specifier.startsWith('.')) {
      const targetPath = relative(root, join(root, path, '..', specifier));
      const target = targetPath.split('/')[0] as string;
      const carried = (CARRIER_EDGES[layer] ?? []).some((folder) => targetPath.startsWith(folder));
      if (!permitted.includes(target) && !carried)
        problems.push(`${path}:${line} ${how} ${specifier} (${layer} may import ${permitted.join(', ')})`);
    } else if (layer === 'core') {
      problems.push(`${path}:${line} ${how} '${specifier}': the core imports nothing outside itself`);
    }
  }
  if (permitted !== undefined && layer !== 'core') {
    for (const { name, line } of processIoOf(path, source))
      problems.push(
        `${path}:${line} reads process.${name}: only the CLI reads the process's argv, environment and streams`,
      );
  }
  if (
    layer === 'core' &&
    /\b(process|Date\.now|Math\.random|fetch|setTimeout)\b\s*[.(]/.test(
      source.replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, ''),
    )
  ) {
    problems.push(`${path} touches the clock, randomness, the process or the network`);
  }
  return problems;
}

function files(directory: string): string[] {
  return readdirSync(directory).flatMap((name) => {
    const path = join(directory, name);
    return statSync(path).isDirectory() ? files(path) : path.endsWith('.ts') ? [path] : [];
  });
}

/** Which files each file under src/ loads at run time (type-only imports are erased), by path relative to src/. */
function runtimeImports(sources: ReadonlyMap<string, string>): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const [path, source] of sources) {
    const targets = new Set<string>();
    for (const { specifier, typeOnly } of importsOf(path, source)) {
      if (typeOnly || specifier === undefined || !specifier.startsWith('.')) continue;
      const target = relative(root, join(root, path, '..', specifier.replace(/\.js$/, '.ts')));
      if (sources.has(target)) targets.add(target);
    }
    graph.set(path, [...targets]);
  }
  return graph;
}

/**
 * One line per group of files that load each other (a strongly connected component, Tarjan's
 * algorithm), naming one cycle through the group's first file: `import cycle: a.ts → b.ts → a.ts`.
 */
function cyclesOf(graph: ReadonlyMap<string, readonly string[]>): string[] {
  const order = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const groups: string[][] = [];
  const connect = (file: string): void => {
    order.set(file, order.size);
    low.set(file, order.get(file) as number);
    stack.push(file);
    onStack.add(file);
    for (const next of graph.get(file) ?? []) {
      if (!order.has(next)) {
        connect(next);
        low.set(file, Math.min(low.get(file) as number, low.get(next) as number));
      } else if (onStack.has(next)) low.set(file, Math.min(low.get(file) as number, order.get(next) as number));
    }
    if (low.get(file) !== order.get(file)) return;
    const group = stack.splice(stack.lastIndexOf(file));
    for (const member of group) onStack.delete(member);
    if (group.length > 1 || graph.get(file)?.includes(file)) groups.push(group.sort());
  };
  for (const file of graph.keys()) if (!order.has(file)) connect(file);
  return groups.map((group) => {
    // The shortest way from the group's first file back to itself, inside the group.
    const start = group[0] as string;
    const members = new Set(group);
    const cameFrom = new Map<string, string>();
    const queue = [start];
    for (let at = 0; at < queue.length && !cameFrom.has(start); at++) {
      const file = queue[at] as string;
      for (const next of graph.get(file) ?? []) {
        if (!members.has(next) || cameFrom.has(next)) continue;
        cameFrom.set(next, file);
        queue.push(next);
      }
    }
    const cycle = [start];
    for (let file = cameFrom.get(start) as string; file !== start; file = cameFrom.get(file) as string)
      cycle.unshift(file);
    return `import cycle: ${[start, ...cycle].join(' → ')}`;
  });
}

function sourcesUnder(directory: string): Map<string, string> {
  return new Map(files(directory).map((file) => [relative(directory, file), readFileSync(file, 'utf8')]));
}

test('imports point inward', () => {
  const problems = [...sourcesUnder(root)].flatMap(([path, source]) => problemsOf(path, source));
  assert.deepEqual(problems, []);
});

test('no file loads itself again through the files it loads (no import cycle at run time)', () => {
  assert.deepEqual(cyclesOf(runtimeImports(sourcesUnder(root))), []);
});

test('the node carrier folder named in the rule exists (a moved carrier must not leave a stale exemption)', () => {
  const present = files(root).map((file) => relative(root, file));
  assert.deepEqual(
    [CARRIER_FOLDER].filter((folder) => !present.some((path) => path.startsWith(folder))),
    [],
  );
});

describe('the rule catches', () => {
  const cases: [what: string, path: string, source: string, ...problems: string[]][] = [
    [
      'a dynamic import across layers',
      'session/store.ts',
      "export const load = () => import('../agent/index.js');",
      'session/store.ts:1 dynamically imports ../agent/index.js (session may import core, session)',
    ],
    [
      'a dynamic import of a computed specifier',
      'agent/run.ts',
      "const name = '../http/index.js';\nexport const load = () => import(name);",
      'agent/run.ts:2 dynamically imports a computed specifier, which cannot be checked (agent may import core, session, agent)',
    ],
    [
      'a side-effect import across layers',
      'http/proxy.ts',
      "import '../session/index.js';",
      'http/proxy.ts:1 imports ../session/index.js (http may import core, http)',
    ],
    [
      'an import() type across layers',
      'emulator/serve.ts',
      "export type Store = import('../session/index.js').SessionStore;",
      'emulator/serve.ts:1 imports ../session/index.js (emulator may import core, emulator)',
    ],
    [
      'node:http outside the carriers',
      'agent/client.ts',
      "import { request } from 'node:http';",
      "agent/client.ts:1 imports 'node:http': only the node carriers (http/node/**) may",
    ],
    [
      'undici outside the carriers, in the http layer',
      'http/create-sanitizing-fetch.ts',
      "import { Agent } from 'undici';",
      "http/create-sanitizing-fetch.ts:1 imports 'undici': only the node carriers (http/node/**) may",
    ],
    [
      'node:net imported dynamically by the CLI',
      'cli/commands/proxy.ts',
      "export const net = await import('node:net');",
      "cli/commands/proxy.ts:1 dynamically imports 'node:net': only the node carriers (http/node/**) may",
    ],
    [
      'the emulator importing http beyond the node carrier',
      'emulator/serve.ts',
      "import { createProxyHandler } from '../http/index.js';",
      'emulator/serve.ts:1 imports ../http/index.js (emulator may import core, emulator)',
    ],
    [
      'chat importing http',
      'chat/backend.ts',
      "import { createSanitizingFetch } from '../http/index.js';",
      'chat/backend.ts:1 imports ../http/index.js (chat may import core, session, agent, chat)',
    ],
    [
      'chat importing the emulator',
      'chat/tools/fake-provider.ts',
      "import { createEmulator } from '../../emulator/index.js';",
      'chat/tools/fake-provider.ts:1 imports ../../emulator/index.js (chat may import core, session, agent, chat)',
    ],
    [
      'chat importing the CLI',
      'chat/chat-context.ts',
      "import type { Io } from '../cli/io.js';",
      'chat/chat-context.ts:1 imports ../cli/io.js (chat may import core, session, agent, chat)',
    ],
    [
      'node:https outside the carriers, in the chat',
      'chat/fetch-model.ts',
      "import { request } from 'node:https';",
      "chat/fetch-model.ts:1 imports 'node:https': only the node carriers (http/node/**) may",
    ],
    [
      'chat reading the environment',
      'chat/run-one-shot.ts',
      'export const key = process.env.DEEPSEEK_API_KEY;',
      "chat/run-one-shot.ts:1 reads process.env: only the CLI reads the process's argv, environment and streams",
    ],
    [
      'the agent writing to stdout, by any spelling',
      'agent/log.ts',
      "const { stdout } = process;\nglobalThis.process['stderr'].write('x');\nexport { stdout };",
      "agent/log.ts:1 reads process.stdout: only the CLI reads the process's argv, environment and streams",
      "agent/log.ts:2 reads process.stderr: only the CLI reads the process's argv, environment and streams",
    ],
    [
      'the session reading argv through node:process',
      'session/args.ts',
      "import { argv } from 'node:process';\nimport * as proc from 'node:process';\nexport const here = proc.cwd();",
      "session/args.ts:1 reads process.argv: only the CLI reads the process's argv, environment and streams",
      "session/args.ts:3 reads process.cwd: only the CLI reads the process's argv, environment and streams",
    ],
  ];
  for (const [what, path, source, ...problems] of cases) {
    test(what, () => assert.deepEqual(problemsOf(path, source), problems));
  }

  test('node:http, undici and process.pid inside the carrier folder, and the CLI reading the process', () => {
    const carrier =
      "import { createServer } from 'node:http';\nimport { Agent } from 'undici';\nexport const pid = process.pid;";
    assert.deepEqual(problemsOf('http/node/serve-handler.ts', carrier), []);
    assert.deepEqual(problemsOf('cli/commands/chat.ts', 'export const env = process.env;'), []);
  });

  test('an import cycle, closed by a dynamic import', () => {
    const sources = new Map([
      ['cli/commands.ts', "export const load = async () => (await import('./commands/check.js')).checkCommand;"],
      [
        'cli/commands/check.ts',
        "import { describeFailure } from '../run.js';\nexport const checkCommand = describeFailure;",
      ],
      ['cli/run.ts', "import { commands } from './commands.js';\nexport const describeFailure = () => commands;"],
      ['cli/main.ts', "import { describeFailure } from './run.js';"],
    ]);
    assert.deepEqual(cyclesOf(runtimeImports(sources)), [
      'import cycle: cli/commands.ts → cli/commands/check.ts → cli/run.ts → cli/commands.ts',
    ]);
  });

  test('a file that loads itself, and type-only imports close no cycle', () => {
    const sources = new Map([
      ['core/profiles.ts', "import type { Rule } from './rules/rule.js';\nexport type { Rule };"],
      ['core/rules/rule.ts', "import { profiles } from '../profiles.js';\nexport type Rule = typeof profiles;"],
      ['agent/loop.ts', "export const again = () => import('./loop.js');"],
    ]);
    assert.deepEqual(cyclesOf(runtimeImports(sources)), ['import cycle: agent/loop.ts → agent/loop.ts']);
  });

  test('nothing in comments or strings, and what chat may import', () => {
    const source = [
      "// import('../http/index.js') is not an import",
      "/** await import('node:http') */",
      'export const text = "import { x } from \'../http/index.js\'";',
      "import { runTurn } from '../agent/index.js';",
      "export const load = () => import('../session/index.js');",
    ].join('\n');
    assert.deepEqual(problemsOf('chat/backend.ts', source), []);
  });

  test('the emulator may import the shared node carrier', () => {
    assert.deepEqual(
      problemsOf('emulator/listen.ts', "import { serveHandler } from '../http/node/serve-handler.js';"),
      [],
    );
  });
});
