// `npm run build`: compiles the programs to plain JavaScript under dist/, runnable with node alone
// (no tsx, no node_modules): dist/functions/serve.js (one function, by name or $FUNCTION_TARGET),
// dist/standalone/main.js (the event bridge), dist/cli/main.js (kubectl etcdfn) and dist/agent/main.js
// (the restore steps in member Pods, also as the command dist/bin/etcdfn-agent).
//
// esbuild bundles each program with its runtime dependencies, in shared chunks (dist/chunks/), with
// source maps beside them. Bundled, a function answers its first event in about half the time of
// tsc's file-per-module output plus node_modules and with ~25% less memory (see the commit that
// chose it and `npm run bench`). Modules loaded with import() (the S3 SDK, each function's entry)
// stay in chunks of their own that load only when used.
import { chmodSync, cpSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { build } from 'esbuild';

const root = resolve(import.meta.dirname, '..');
const out = join(root, 'dist');

export const ENTRY_POINTS = ['functions/serve.ts', 'standalone/main.ts', 'cli/main.ts', 'agent/main.ts'];

// Bundled CommonJS modules expect require, __filename and __dirname; in an ES module chunk these
// name the chunk's own file and folder (dist/chunks), which is where etcd3 looks for its .proto files
// (`${__dirname}/../proto`): they are copied to dist/proto.
const BANNER = [
  "import { createRequire as __etcdfnCreateRequire } from 'node:module';",
  "import { fileURLToPath as __etcdfnFileURLToPath } from 'node:url';",
  'const require = __etcdfnCreateRequire(import.meta.url);',
  'const __filename = __etcdfnFileURLToPath(import.meta.url);',
  'const __dirname = import.meta.dirname;',
].join('\n');

async function main(): Promise<void> {
  const started = Date.now();
  rmSync(out, { recursive: true, force: true });
  const result = await build({
    absWorkingDir: root,
    entryPoints: ENTRY_POINTS,
    outdir: out,
    outbase: root,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node26',
    chunkNames: 'chunks/[name]-[hash]',
    sourcemap: 'linked',
    // Names stay readable in stack traces; whitespace goes.
    minifyWhitespace: true,
    minifySyntax: true,
    banner: { js: BANNER },
    legalComments: 'linked',
    metafile: true,
    logLevel: 'warning',
  });
  mkdirSync(join(out, 'proto'), { recursive: true });
  cpSync(join(root, 'node_modules/etcd3/proto'), join(out, 'proto'), { recursive: true });
  writeAgentCommand();
  const bytes = (ext: string) =>
    files(out)
      .filter(f => f.endsWith(ext))
      .reduce((sum, f) => sum + statSync(f).size, 0);
  const mib = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MiB`;
  console.log(
    `dist/: ${ENTRY_POINTS.map(e => e.replace(/\.ts$/, '.js')).join(', ')}; ` +
      `${Object.keys(result.metafile.outputs).filter(f => f.endsWith('.js')).length} .js files, ` +
      `${mib(bytes('.js'))} of JavaScript, ${mib(bytes('.map'))} of source maps, ` +
      `in ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
}

// `etcdfn-agent`, the command member Pods' restore init containers run (shared/builders/restore-pod.ts):
// an executable in dist/bin, which the image puts on PATH. The image has no shell, so the kernel runs
// it through its #! line with the image's node; import() works whether node reads the extensionless
// file as CommonJS or as an ES module.
function writeAgentCommand(): void {
  const file = join(out, 'bin', 'etcdfn-agent');
  mkdirSync(join(out, 'bin'), { recursive: true });
  writeFileSync(file, "#!/usr/local/bin/node\nimport('../agent/main.js');\n");
  chmodSync(file, 0o755);
}

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap(e =>
    e.isDirectory() ? files(join(dir, e.name)) : [join(dir, e.name)],
  );
}

main().catch((err: unknown) => {
  console.error(`build failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
