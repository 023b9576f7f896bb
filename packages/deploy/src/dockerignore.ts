// Whether a path of the build context survives a .dockerignore: the last matching pattern wins, a
// leading `!` re-includes, a pattern that matches a directory also matches everything under it.

interface Rule {
  negate: boolean;
  regex: RegExp;
}

function toRegex(pattern: string): RegExp {
  let out = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i] ?? '';
    if (c === '*' && pattern[i + 1] === '*') {
      out += '.*';
      i++;
      if (pattern[i + 1] === '/') i++; // `**/x` also matches `x`
    } else if (c === '*') out += '[^/]*';
    else if (c === '?') out += '[^/]';
    else out += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${out}$`);
}

export function parseDockerignore(text: string): Rule[] {
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const negate = line.startsWith('!');
      const pattern = (negate ? line.slice(1) : line).trim().replace(/^\/+/, '').replace(/\/+$/, '');
      return { negate, regex: toRegex(pattern) };
    });
}

/** True when `path` (relative to the context, `/`-separated) is sent to the builder. */
export function isIncluded(rules: Rule[], path: string): boolean {
  const parts = path.replace(/^\.\//, '').replace(/\/+$/, '').split('/');
  const prefixes = parts.map((_, i) => parts.slice(0, i + 1).join('/'));
  let included = true;
  for (const rule of rules) {
    if (prefixes.some((prefix) => rule.regex.test(prefix))) included = rule.negate;
  }
  return included;
}
