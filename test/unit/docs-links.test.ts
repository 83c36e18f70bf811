/**
 * The documentation a reader follows from the front page: README.md stays a front page (under 10 KB), every page under
 * docs/ is reachable from it, and every relative link in README.md, ARCHITECTURE.md and docs/ leads to a file that
 * exists and, with a #fragment, to a heading that file has.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../../devstack/binaries.ts';

const root = repoRoot();
const docs = readdirSync(join(root, 'docs'))
  .filter((name) => name.endsWith('.md'))
  .map((name) => `docs/${name}`);
const pages = ['README.md', 'ARCHITECTURE.md', ...docs];

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\- _]/gu, '')
    .replace(/ /g, '-');
}

function withoutCode(text: string): string {
  return text.replace(/^```[\s\S]*?^```/gm, '').replace(/`[^`\n]*`/g, '');
}

function anchors(file: string): Set<string> {
  const text = readFileSync(join(root, file), 'utf8').replace(/^```[\s\S]*?^```/gm, '');
  return new Set([...text.matchAll(/^#{1,6} (.+)$/gm)].map((m) => anchorOf(m[1] as string)));
}

function links(file: string): string[] {
  const text = withoutCode(readFileSync(join(root, file), 'utf8'));
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1] as string);
}

describe('the documentation', () => {
  it('keeps README.md a front page: under 10 KB', () => {
    expect(readFileSync(join(root, 'README.md')).length).toBeLessThan(10 * 1024);
  });

  it('links every page of docs/ from README.md', () => {
    const fromReadme = new Set(links('README.md').map((link) => link.split('#')[0]));
    expect(docs.filter((page) => !fromReadme.has(page))).toEqual([]);
  });

  it('has every relative link lead to a file that exists, and every #fragment to one of its headings', () => {
    const broken: string[] = [];
    for (const page of pages) {
      for (const link of links(page)) {
        if (/^[a-z]+:/.test(link)) continue;
        const [path, fragment] = link.split('#') as [string, string | undefined];
        const target = path === '' ? page : relative(root, resolve(root, dirname(page), path));
        if (!existsSync(join(root, target))) {
          broken.push(`${page}: ${link} (no file ${target})`);
          continue;
        }
        if (fragment && target.endsWith('.md') && !anchors(target).has(fragment)) {
          broken.push(`${page}: ${link} (no heading #${fragment} in ${target})`);
        }
      }
    }
    expect(broken).toEqual([]);
  });
});
