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
 * be checked, so outside the CLI it is refused.
 */
const root = new URL('../src/', import.meta.url).pathname;
const allowed: Record<string, string[]> = {
  core: ['core'],
  session: ['core', 'session'],
  emulator: ['core', 'emulator'],
  http: ['core', 'http'],
  agent: ['core', 'session', 'agent'],
  // src/chat/ does not exist yet (the chat command's pieces are in src/cli/chat/); the rule is
  // here so the folder is held to it from its first file: chat runs the agent, never the proxy.
  chat: ['core', 'session', 'agent', 'chat'],
};

/** The network carriers: node's HTTP/TCP stacks and undici are imported only by the node adapters. */
const CARRIER_MODULES = /^(?:node:)?(?:http|https|http2|net|tls)$|^undici(?:\/|$)/;
/**
 * The node carriers live in one folder (http/node/: the servers, the native relay, the upstream
 * fetch and pool, and the upstream sockets guarded against undici 6's assertion, nodejs/undici#5360).
 */
const CARRIERS = ['http/node/'];
/**
 * Folders a layer may import besides its own allowed layers: the emulator is served by the shared
 * node carrier (http/node/serve-handler.ts), not a copy of it, and imports nothing else of http/.
 */
const CARRIER_EDGES: Record<string, string[]> = { emulator: ['http/node/'] };

interface Import {
  readonly specifier: string | undefined; // undefined: a dynamic import of a computed specifier
  readonly line: number;
  readonly dynamic: boolean;
}

/** Every module a file imports, read from the TypeScript syntax tree (comments and strings never match). */
function importsOf(path: string, source: string): Import[] {
  const file = ts.createSourceFile(path, source, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const found: Import[] = [];
  const add = (node: ts.Node, specifier: ts.Node | undefined, dynamic: boolean): void => {
    const line = file.getLineAndCharacterOfPosition(node.getStart(file)).line + 1;
    found.push({
      specifier: specifier !== undefined && ts.isStringLiteralLike(specifier) ? specifier.text : undefined,
      line,
      dynamic,
    });
  };
  const visit = (node: ts.Node): void => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier !== undefined)
      add(node, node.moduleSpecifier, false);
    else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference))
      add(node, node.moduleReference.expression, false);
    else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword)
      add(node, node.arguments[0], true);
    else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) add(node, node.argument.literal, false);
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
    if (CARRIER_MODULES.test(specifier) && !CARRIERS.some((folder) => path.startsWith(folder))) {
      problems.push(`${path}:${line} ${how} '${specifier}': only the node carriers (${CARRIERS.join(', ')}) may`);
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

test('imports point inward', () => {
  const problems = files(root).flatMap((file) => problemsOf(relative(root, file), readFileSync(file, 'utf8')));
  assert.deepEqual(problems, []);
});

test('every node carrier folder named in the rule exists (a moved carrier must not leave a stale exemption)', () => {
  const present = files(root).map((file) => relative(root, file));
  assert.deepEqual(
    CARRIERS.filter((folder) => !present.some((path) => path.startsWith(folder))),
    [],
  );
});

describe('the rule catches', () => {
  const cases: [string, string, string, string][] = [
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
      "agent/client.ts:1 imports 'node:http': only the node carriers (http/node/) may",
    ],
    [
      'undici outside the carriers, in the http layer',
      'http/create-sanitizing-fetch.ts',
      "import { Agent } from 'undici';",
      "http/create-sanitizing-fetch.ts:1 imports 'undici': only the node carriers (http/node/) may",
    ],
    [
      'node:net imported dynamically by the CLI',
      'cli/commands/proxy.ts',
      "export const net = await import('node:net');",
      "cli/commands/proxy.ts:1 dynamically imports 'node:net': only the node carriers (http/node/) may",
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
  ];
  for (const [what, path, source, problem] of cases) {
    test(what, () => assert.deepEqual(problemsOf(path, source), [problem]));
  }

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
