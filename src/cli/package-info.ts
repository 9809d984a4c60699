/**
 * What the CLI says about itself, read from the package's package.json (found by walking up from
 * this module, in src/cli, dist/cli or the bundle's dist/bin): the version, and the home page and
 * the repository's web address when package.json names them (SARIF's `informationUri` and rules'
 * `helpUri`; absent otherwise: the rules' help is whole without them).
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { repositoryWebUrl, type SarifOptions } from '../check/sarif.js';

/** The package's version, repository address and home page (http or https). */
export interface PackageInfo {
  version: string;
  repositoryUrl?: string;
  homepageUrl?: string;
}

let cached: PackageInfo | undefined;

/** The SARIF options of this package (src/check/sarif.ts): its version as the tool's, its web addresses. */
export function sarifOptions(): SarifOptions {
  const { version, repositoryUrl, homepageUrl } = packageInfo();
  return { toolVersion: version, ...(repositoryUrl ? { repositoryUrl } : {}), ...(homepageUrl ? { homepageUrl } : {}) };
}

/** package.json's `homepage` when it is an http(s) address. */
export function homepageWebUrl(homepage: unknown): string | undefined {
  return typeof homepage === 'string' && /^https?:\/\/\S+$/.test(homepage.trim()) ? homepage.trim() : undefined;
}

/** Reads package.json once; `0.0.0` and no repository if it cannot be found. */
export function packageInfo(): PackageInfo {
  if (cached) return cached;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) {
      const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string; repository?: unknown; homepage?: unknown };
      if (pkg.name === 'mbsim') {
        const repositoryUrl = repositoryWebUrl(pkg.repository);
        const homepageUrl = homepageWebUrl(pkg.homepage);
        return (cached = { version: pkg.version ?? '0.0.0', ...(repositoryUrl ? { repositoryUrl } : {}), ...(homepageUrl ? { homepageUrl } : {}) });
      }
    }
    dir = dirname(dir);
  }
  return (cached = { version: '0.0.0' });
}
