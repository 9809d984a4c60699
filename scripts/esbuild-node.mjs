/**
 * The esbuild options the bundles of the project share (scripts/bundle.mjs for the CLI,
 * scripts/bundle-soak.mjs for the differential soak): ES modules for Node 20, code split into
 * chunks next to the entries, and a `require` for the dependencies written as CommonJS
 * (commander, cli-progress), which call it for Node's own modules; and the CLI as one CommonJS
 * file ({@link commonJsBundle}).
 *
 * Node's own modules are taken with that `require`, not with `import` ({@link builtinsByRequire}):
 * importing `node:fs` as an ES module builds a namespace of every export, which reads `fs.promises`
 * and so loads the promise API, streams and readline (~5-10 ms at every start); `require` returns
 * the object as it is and nothing more is loaded until it is used.
 */
import { readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';

const BUILTINS = new Set(builtinModules);

/** `import … from 'node:fs'` (or `'fs'`) in the bundled code becomes `require('node:fs')`. */
export const builtinsByRequire = {
  name: 'builtins-by-require',
  setup(build) {
    build.onResolve({ filter: /^(node:)?[a-z_/]+$/ }, (args) => {
      if (args.kind !== 'import-statement' && args.kind !== 'dynamic-import') return undefined;
      const name = args.path.replace(/^node:/, '');
      if (!BUILTINS.has(name)) return undefined;
      return { path: name, namespace: 'node-builtin' };
    });
    build.onLoad({ filter: /.*/, namespace: 'node-builtin' }, (args) => ({
      contents: `module.exports = require(${JSON.stringify(`node:${args.path}`)});`,
      loader: 'js',
    }));
  },
};

/**
 * commander takes `node:child_process` at load for subcommands run as separate executables, which
 * mbsim has none of: it gets an object that loads the module on first use (~5 ms of every start).
 */
export const lazyChildProcess = {
  name: 'lazy-child-process',
  setup(build) {
    build.onResolve({ filter: /^(node:)?child_process$/ }, (args) => {
      if (args.kind !== 'require-call' || !/[\\/]node_modules[\\/]commander[\\/]/.test(args.importer)) return undefined;
      return { path: 'child_process', namespace: 'lazy-child-process' };
    });
    build.onLoad({ filter: /.*/, namespace: 'lazy-child-process' }, () => ({
      contents: "let m; module.exports = new Proxy({}, { get: (_, k) => (m ??= require('node:child_process'))[k] });",
      loader: 'js',
    }));
  },
};

/**
 * Chevrotain's lexer fills a table of 65,536 entries (char code -> index of its first-character
 * optimization) when the first lexer is built: ~9 ms of every start, for an optimization the
 * sketch lexer does not use (`safeMode`). The table's entries are computed where they are read
 * instead (the same values). The replaced text is checked: another chevrotain fails the build.
 */
export const chevrotainNoCharTable = {
  name: 'chevrotain-no-char-table',
  setup(build) {
    build.onLoad({ filter: /[\\/]chevrotain[\\/]lib[\\/]src[\\/]scan[\\/]lexer\.js$/ }, (args) => {
      let text = readFileSync(args.path, 'utf8');
      const edits = [
        ['        : charCodeToOptimizedIdxMap[charCode];', '        : 255 + ~~(charCode / 255);'],
        ['    if (isEmpty(charCodeToOptimizedIdxMap)) {', '    if (false) {'],
      ];
      for (const [from, to] of edits) {
        if (text.split(from).length !== 2) throw new Error(`chevrotain-no-char-table: ${args.path} no longer holds ${JSON.stringify(from)} (another chevrotain version?)`);
        text = text.replace(from, to);
      }
      return { contents: text, loader: 'js' };
    });
  },
};

/**
 * The CLI's verbs that `run` and `check` never need, kept out of `cli.cjs` (every command reads and
 * loads that file): `mbsim lsp`'s language server (with vscode-languageserver, a quarter of the
 * bundle) and `mbsim serve`'s explorer server. Each is its own CommonJS file next to `cli.cjs`,
 * which the verb's `import()` requires instead ({@link splitVerbs}).
 */
export const VERB_FILES = { 'src/lsp/index.ts': 'lsp.cjs', 'src/web/server/serve.ts': 'serve.cjs' };

/**
 * The `import()` of a {@link VERB_FILES} module in the CLI bundle becomes a `require` of its file
 * next to the bundle (a script run through the code cache has no `import()` of its own).
 */
export function splitVerbs(root) {
  const byPath = new Map(Object.entries(VERB_FILES).map(([src, out]) => [`${root}${src}`.replace(/\\/g, '/'), out]));
  const outs = new Set(Object.values(VERB_FILES));
  return {
    name: 'split-verbs',
    setup(build) {
      build.onResolve({ filter: /^\.\.?\// }, async (args) => {
        if (args.kind === 'require-call' && args.namespace === 'split-verbs' && outs.has(args.path.slice(2))) return { path: args.path, external: true };
        if (args.kind !== 'dynamic-import' || args.pluginData === 'split-verbs') return undefined;
        const r = await build.resolve(args.path, { kind: args.kind, resolveDir: args.resolveDir, importer: args.importer, pluginData: 'split-verbs' });
        const out = byPath.get(r.path.replace(/\\/g, '/'));
        return out ? { path: out, namespace: 'split-verbs' } : undefined;
      });
      build.onLoad({ filter: /.*/, namespace: 'split-verbs' }, (args) => ({ contents: `module.exports = require(${JSON.stringify(`./${args.path}`)});`, loader: 'js' }));
    },
  };
}

/**
 * One CommonJS file for Node 20 (scripts/bundle.mjs: the CLI run through the code cache), with the
 * same plugins. `import.meta.url` is the file's URL, as in the ES module bundles.
 */
export function commonJsBundle(root, entry, outfile, extraPlugins = []) {
  return {
    absWorkingDir: root,
    entryPoints: [entry],
    outfile,
    bundle: true,
    format: 'cjs',
    platform: 'node',
    target: 'node20',
    logLevel: 'warning',
    plugins: [...extraPlugins, lazyChildProcess, chevrotainNoCharTable],
    define: { 'import.meta.url': '__mbsimUrl' },
    banner: { js: "const __mbsimUrl = require('node:url').pathToFileURL(__filename).href;" },
  };
}

export function nodeBundle(root, entryPoints, outdir) {
  return {
    absWorkingDir: root,
    entryPoints,
    outdir,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    chunkNames: 'chunk-[hash]',
    logLevel: 'warning',
    plugins: [builtinsByRequire, lazyChildProcess, chevrotainNoCharTable],
    banner: { js: "import { createRequire as __mbsimRequire } from 'node:module'; const require = __mbsimRequire(import.meta.url);" },
  };
}
