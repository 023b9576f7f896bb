// The command lines the READMEs show: read from their shell code blocks the way a person copies them.
import { trackedFiles, read } from './repo.js';

/** One command line of a README's shell code block. */
export interface ReadmeCommand {
  /** README path, relative to the repository root. */
  file: string;
  /** 1-based line where the command starts. */
  line: number;
  /** What a user runs: prompt and trailing comment removed, `\` continuations joined. */
  text: string;
  /** `text` with runs of white space collapsed: the key the tests' tables use. */
  key: string;
}

/** Code-block languages whose lines are shell commands. */
const SHELL_LANGUAGES = new Set(['sh', 'bash', 'shell', 'console', 'zsh']);

/** Every README.md git tracks (what a fresh clone has), sorted. */
export function readmeFiles(): string[] {
  return trackedFiles('*README.md')
    .filter((file) => /(^|\/)README\.md$/.test(file))
    .sort();
}

/** The command lines of every tracked README. */
export function readmeCommands(): ReadmeCommand[] {
  return readmeFiles().flatMap((file) => commandsInMarkdown(file, read(file)));
}

/** White space collapsed: two spellings of one command get one key. */
export function commandKey(text: string): string {
  return text.trim().replace(/\s+/g, ' ');
}

/**
 * The command lines of the shell code blocks (```sh, ```bash, ```shell, ```console) of a Markdown
 * text. In a block with `$ ` prompts only the prompted lines are commands (the rest is output); in
 * a `console` block without prompts nothing is. Comment lines are dropped, trailing comments cut,
 * and lines ending in `\` joined with the next.
 */
export function commandsInMarkdown(file: string, markdown: string): ReadmeCommand[] {
  const lines = markdown.split('\n');
  const out: ReadmeCommand[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,}|~{3,})\s*([\w+-]*)/.exec(lines[i] ?? '');
    if (!open) continue;
    const fence = open[2] ?? '```';
    const language = (open[3] ?? '').toLowerCase();
    const body: { line: number; text: string }[] = [];
    let j = i + 1;
    for (; j < lines.length; j++) {
      const text = lines[j] ?? '';
      const close = text.trim();
      if (close.length >= fence.length && close === (fence[0] ?? '`').repeat(close.length)) break;
      body.push({ line: j + 1, text: text.replace(/^\s+/, '') });
    }
    i = j;
    if (!SHELL_LANGUAGES.has(language)) continue;
    const prompted = body.some((b) => b.text.startsWith('$ '));
    if (language === 'console' && !prompted) continue;
    for (let k = 0; k < body.length; k++) {
      const first = body[k];
      if (first === undefined) continue;
      let text = first.text;
      if (prompted) {
        if (!text.startsWith('$ ')) continue;
        text = text.slice(2);
      }
      text = stripComment(text).trim();
      if (text === '') continue;
      while (text.endsWith('\\') && k + 1 < body.length) {
        k += 1;
        text = `${text.slice(0, -1).trimEnd()} ${stripComment(body[k]?.text ?? '').trim()}`;
      }
      out.push({ file, line: first.line, text, key: commandKey(text) });
    }
  }
  return out;
}

/** A line without its shell comment (a `#` outside quotes at the start or after white space). */
export function stripComment(line: string): string {
  let quote: '"' | "'" | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quote === "'") {
      if (c === "'") quote = undefined;
    } else if (c === '\\') {
      i += 1;
    } else if (quote === '"') {
      if (c === '"') quote = undefined;
    } else if (c === '"' || c === "'") {
      quote = c;
    } else if (c === '#' && (i === 0 || /\s/.test(line[i - 1] ?? ''))) {
      return line.slice(0, i);
    }
  }
  return line;
}

/** The simple commands of a command line (split on `&&`, `||`, `|` and `;` outside quotes). */
export function simpleCommands(text: string): string[] {
  const out: string[] = [];
  let quote: '"' | "'" | undefined;
  let depth = 0; // inside $( … )
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quote === "'") {
      if (c === "'") quote = undefined;
      continue;
    }
    if (c === '\\') {
      i += 1;
    } else if (c === '"') {
      quote = quote === '"' ? undefined : '"';
    } else if (c === "'" && quote === undefined) {
      quote = "'";
    } else if (c === '(' && text[i - 1] === '$') {
      depth += 1;
    } else if (c === ')' && depth > 0) {
      depth -= 1;
    } else if (quote === undefined && depth === 0 && (c === '|' || c === '&' || c === ';')) {
      if (c === '&' && text[i + 1] !== '&') continue; // a lone & (background) is not a separator here
      out.push(text.slice(start, i));
      if ((c === '|' || c === '&') && text[i + 1] === c) i += 1;
      start = i + 1;
    }
  }
  out.push(text.slice(start));
  return out.map((s) => s.trim()).filter(Boolean);
}

/** The program a simple command runs: its first word after `VAR=value` assignments. */
export function programOf(simple: string): string | undefined {
  return simple.split(/\s+/).find((word) => !/^[A-Za-z_][A-Za-z0-9_]*=/.test(word));
}

/** The package bins `npx` runs in a text (`npx tritonserver-ts …` → `tritonserver-ts`). */
export function npxBins(text: string): string[] {
  const out: string[] = [];
  for (const simple of simpleCommands(text)) {
    const words = simple.split(/\s+/);
    const at = words.indexOf('npx');
    if (at < 0) continue;
    const bin = words.slice(at + 1).find((word) => !word.startsWith('-'));
    if (bin !== undefined) out.push(bin);
  }
  return out;
}

/** Inline code spans of a Markdown text that are `npx` commands (`` `npx turbo run build` ``). */
export function inlineNpxCommands(markdown: string): string[] {
  return [...markdown.matchAll(/`(npx [^`\n]+)`/g)].map((m) => m[1] ?? '');
}

/** An npm script a command runs: `npm run <script>`, `npm test`, `npm start`, with its `-w` workspaces. */
export interface NpmScriptUse {
  script: string;
  /** Workspaces named by `-w` / `--workspace`; empty: the current directory's package. */
  workspaces: string[];
}

/** The npm scripts a text runs (`npm ci`, `npm install` and other npm commands are not scripts). */
export function npmScripts(text: string): NpmScriptUse[] {
  const out: NpmScriptUse[] = [];
  for (const simple of simpleCommands(text)) {
    const all = simple.split(/\s+/);
    let first = 0; // after leading VAR=value assignments
    while (first < all.length && /^[A-Za-z_][A-Za-z0-9_]*=/.test(all[first] ?? '')) first += 1;
    const words = all.slice(first);
    if (words[0] !== 'npm') continue;
    const workspaces: string[] = [];
    const rest: string[] = [];
    for (let i = 1; i < words.length; i++) {
      const word = words[i] ?? '';
      if (word === '--') break;
      if (word === '-w' || word === '--workspace') workspaces.push(words[++i] ?? '');
      else if (/^(-w|--workspace)=/.test(word)) workspaces.push(word.slice(word.indexOf('=') + 1));
      else if (!word.startsWith('-')) rest.push(word);
    }
    const [command, script] = rest;
    if ((command === 'run' || command === 'run-script') && script !== undefined)
      out.push({ script, workspaces });
    else if (command === 'test' || command === 'start') out.push({ script: command, workspaces });
  }
  return out;
}

/** Inline code spans of a Markdown text that are npm commands (`` `npm run build` ``). */
export function inlineNpmCommands(markdown: string): string[] {
  return [...markdown.matchAll(/`(npm [^`\n]+)`/g)].map((m) => m[1] ?? '');
}
