/**
 * What the CLI says about itself, read from the package's package.json (found by walking up from
 * this module, in src/cli, dist/cli or the bundle's dist/bin): the version, and the repository's
 * web address when package.json names one (SARIF's `informationUri`; absent otherwise).
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { repositoryWebUrl, type SarifOptions } from '../check/sarif.js';

/** The package's version and repository address. */
export interface PackageInfo {
  version: string;
  repositoryUrl?: string;
}

let cached: PackageInfo | undefined;

/** The SARIF options of this package (src/check/sarif.ts): its version as the tool's, its web address. */
export function sarifOptions(): SarifOptions {
  const { version, repositoryUrl } = packageInfo();
  return { toolVersion: version, ...(repositoryUrl ? { repositoryUrl } : {}) };
}

/** Reads package.json once; `0.0.0` and no repository if it cannot be found. */
export function packageInfo(): PackageInfo {
  if (cached) return cached;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) {
      const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string; repository?: unknown };
      if (pkg.name === 'mbsim') {
        const repositoryUrl = repositoryWebUrl(pkg.repository);
        return (cached = { version: pkg.version ?? '0.0.0', ...(repositoryUrl ? { repositoryUrl } : {}) });
      }
    }
    dir = dirname(dir);
  }
  return (cached = { version: '0.0.0' });
}
