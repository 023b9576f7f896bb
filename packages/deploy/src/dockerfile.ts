// A small Dockerfile reader: enough to check what our Dockerfiles declare (stages, FROM, COPY, USER,
// EXPOSE, ENV, WORKDIR, HEALTHCHECK, CMD, the commands of a RUN) without a Docker engine. Not a full
// BuildKit parser: ARGs declared before the first FROM are kept with their defaults and expanded in
// FROM by `resolvedImage`; no heredocs.

import { posix } from 'node:path';

export interface Instruction {
  /** Upper-case keyword, e.g. `COPY`. */
  keyword: string;
  /** `--name=value` flags in front of the arguments (`--from`, `--chown`, `--interval`, …). */
  flags: Record<string, string>;
  /** Everything after the keyword and flags, continuation lines joined with a space. */
  args: string;
  /** 1-based line of the keyword. */
  line: number;
}

export interface Stage {
  /** `FROM <image> [AS <name>]`. */
  image: string;
  name: string | undefined;
  instructions: Instruction[];
}

export interface Dockerfile {
  stages: Stage[];
  /** `ARG NAME[=default]` before the first FROM (the ones FROM may use), default or undefined. */
  globalArgs: Record<string, string | undefined>;
}

const FLAG = /^--([a-z-]+)(?:=(\S*))?\s*/;

export function parseDockerfile(text: string): Dockerfile {
  const logical: { text: string; line: number }[] = [];
  let current: { text: string; line: number } | undefined;
  text.split('\n').forEach((raw, index) => {
    const trimmed = raw.trim();
    if (current === undefined && (trimmed === '' || trimmed.startsWith('#'))) return;
    if (current !== undefined && trimmed.startsWith('#')) return; // comment inside a continuation
    const continues = trimmed.endsWith('\\');
    const part = continues ? trimmed.slice(0, -1).trim() : trimmed;
    if (current === undefined) current = { text: part, line: index + 1 };
    else current.text = `${current.text} ${part}`.trim();
    if (!continues) {
      logical.push(current);
      current = undefined;
    }
  });
  if (current !== undefined) logical.push(current);

  const stages: Stage[] = [];
  const globalArgs: Record<string, string | undefined> = {};
  for (const { text: source, line } of logical) {
    const match = /^(\S+)\s*(.*)$/.exec(source);
    if (!match) continue;
    const keyword = (match[1] ?? '').toUpperCase();
    let rest = match[2] ?? '';
    const flags: Record<string, string> = {};
    for (let flag = FLAG.exec(rest); flag; flag = FLAG.exec(rest)) {
      flags[flag[1] ?? ''] = flag[2] ?? 'true';
      rest = rest.slice(flag[0].length);
    }
    if (keyword === 'FROM') {
      const from = /^(\S+)(?:\s+AS\s+(\S+))?\s*$/i.exec(rest);
      if (!from) throw new Error(`line ${line}: cannot read FROM ${rest}`);
      stages.push({ image: from[1] ?? '', name: from[2], instructions: [] });
      continue;
    }
    const stage = stages.at(-1);
    if (stage === undefined) {
      if (keyword === 'ARG') {
        // ARG before the first FROM: `NAME` or `NAME=default` (quotes around the default removed).
        const arg = /^([A-Za-z_][A-Za-z0-9_]*)(?:=("[^"]*"|'[^']*'|\S*))?\s*$/.exec(rest);
        if (!arg) throw new Error(`line ${line}: cannot read ARG ${rest}`);
        const value = arg[2];
        globalArgs[arg[1] ?? ''] = value === undefined ? undefined : value.replace(/^(["'])(.*)\1$/, '$2');
        continue;
      }
      throw new Error(`line ${line}: ${keyword} before FROM`);
    }
    stage.instructions.push({ keyword, flags, args: rest, line });
  }
  return { stages, globalArgs };
}

/**
 * A stage's FROM image with the global ARGs (`$NAME`, `${NAME}`) replaced by `buildArgs` or else
 * their defaults, as `docker build --build-arg NAME=value` would. Throws on an ARG without a value.
 */
export function resolvedImage(
  file: Dockerfile,
  stage: Stage,
  buildArgs: Record<string, string> = {},
): string {
  return stage.image.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)/g, (_, a, b) => {
    const name = (a ?? b) as string;
    if (!(name in file.globalArgs))
      throw new Error(`FROM ${stage.image}: ARG ${name} is not declared before FROM`);
    const value = buildArgs[name] ?? file.globalArgs[name];
    if (value === undefined) throw new Error(`FROM ${stage.image}: ARG ${name} has no default`);
    return value;
  });
}

/** Exec form (`["a", "b"]`) as a list; shell form as `['/bin/sh', '-c', text]`. */
export function commandOf(args: string): string[] {
  const text = args.trim();
  if (text.startsWith('[')) {
    const parsed: unknown = JSON.parse(text);
    if (!Array.isArray(parsed) || !parsed.every((x) => typeof x === 'string')) {
      throw new Error(`not an exec-form array: ${text}`);
    }
    return parsed;
  }
  return ['/bin/sh', '-c', text];
}

/** Source paths and destination of a COPY/ADD (both forms). */
export function copyPaths(args: string): { sources: string[]; destination: string } {
  const parts = args.trim().startsWith('[') ? commandOf(args) : args.trim().split(/\s+/);
  if (parts.length < 2) throw new Error(`COPY needs a source and a destination: ${args}`);
  return { sources: parts.slice(0, -1), destination: parts.at(-1) ?? '' };
}

/** `ENV a=b c=d` and the legacy `ENV a b`. Quotes around values are removed. */
export function envOf(args: string): Record<string, string> {
  const out: Record<string, string> = {};
  const text = args.trim();
  if (!/^\S+=/.test(text)) {
    const [key, ...value] = text.split(/\s+/);
    if (key) out[key] = value.join(' ');
    return out;
  }
  for (const pair of text.matchAll(/([A-Za-z_][A-Za-z0-9_]*)=("(?:[^"\\]|\\.)*"|'[^']*'|\S*)/g)) {
    const raw = pair[2] ?? '';
    out[pair[1] ?? ''] = /^["']/.test(raw) ? raw.slice(1, -1) : raw;
  }
  return out;
}

export function instructions(stage: Stage, keyword: string): Instruction[] {
  return stage.instructions.filter((i) => i.keyword === keyword);
}

/** The last value of an instruction in a stage, e.g. the effective USER or CMD. */
export function last(stage: Stage, keyword: string): Instruction | undefined {
  return instructions(stage, keyword).at(-1);
}

/** Ports a stage EXPOSEs (`8000`, `8000/tcp`). */
export function exposedPorts(stage: Stage): number[] {
  return instructions(stage, 'EXPOSE').flatMap((i) =>
    i.args
      .split(/\s+/)
      .filter(Boolean)
      .map((p) => Number.parseInt(p, 10)),
  );
}

/** Environment a stage sets, including what it inherits from a parent stage of the same file. */
export function stageEnv(file: Dockerfile, stage: Stage): Record<string, string> {
  const parent = file.stages.find((s) => s.name !== undefined && s.name === stage.image);
  const inherited = parent ? stageEnv(file, parent) : {};
  return Object.assign(inherited, ...instructions(stage, 'ENV').map((i) => envOf(i.args))) as Record<
    string,
    string
  >;
}

/** The stage of the same file that a stage builds on (`FROM <stage name>`), if any. */
export function parentStage(file: Dockerfile, stage: Stage): Stage | undefined {
  return file.stages.find((s) => s !== stage && s.name !== undefined && s.name === stage.image);
}

/** A stage, then the stage it builds on, and so on up to the one that starts from an image. */
export function stageChain(file: Dockerfile, stage: Stage): Stage[] {
  const chain: Stage[] = [];
  let current: Stage | undefined = stage;
  while (current !== undefined && !chain.includes(current)) {
    chain.push(current);
    current = parentStage(file, current);
  }
  return chain;
}

/** The image a stage ultimately starts from (through the stages of the same file it builds on). */
export function baseImage(file: Dockerfile, stage: Stage): string {
  return stageChain(file, stage).at(-1)?.image ?? stage.image;
}

/** The effective instruction of a kind (CMD, USER, …): the stage's last one, else its parents'. */
export function lastInherited(file: Dockerfile, stage: Stage, keyword: string): Instruction | undefined {
  for (const s of stageChain(file, stage)) {
    const found = last(s, keyword);
    if (found !== undefined) return found;
  }
  return undefined;
}

/**
 * The working directory in effect at an instruction (after every WORKDIR before it, or after the
 * whole stage when `at` is not given), including WORKDIRs inherited from a parent stage of the same
 * file. `undefined` when it depends on the base image's own WORKDIR, which the file does not show.
 */
export function workdirAt(file: Dockerfile, stage: Stage, at?: Instruction): string | undefined {
  const parent = parentStage(file, stage);
  let dir = parent === undefined ? undefined : workdirAt(file, parent);
  for (const instruction of stage.instructions) {
    if (instruction === at) break;
    if (instruction.keyword !== 'WORKDIR') continue;
    dir = resolvePath(dir, instruction.args.trim());
  }
  return dir;
}

/** A COPY/ADD destination or RUN path as an absolute path, relative ones resolved from `workdir`. */
export function resolvePath(workdir: string | undefined, path: string): string | undefined {
  if (path.startsWith('/')) return posix.normalize(path).replace(/(.)\/$/, '$1');
  return workdir === undefined ? undefined : posix.join(workdir, path).replace(/(.)\/$/, '$1');
}

/**
 * The simple commands of a shell-form RUN, as argument lists: split at `&&`, `||`, `;` and `|`,
 * parentheses dropped, single and double quotes removed (no expansion, redirections kept as words).
 */
export function shellCommands(args: string): string[][] {
  const commands: string[][] = [];
  let words: string[] = [];
  let word: string | undefined;
  const endWord = (): void => {
    if (word !== undefined) words.push(word);
    word = undefined;
  };
  const endCommand = (): void => {
    endWord();
    if (words.length > 0) commands.push(words);
    words = [];
  };
  const text = args.trim();
  for (let i = 0; i < text.length; i++) {
    const c = text[i] ?? '';
    if (c === "'" || c === '"') {
      const close = text.indexOf(c, i + 1);
      if (close < 0) throw new Error(`unterminated quote in: ${text}`);
      word = (word ?? '') + text.slice(i + 1, close);
      i = close;
    } else if (c === '\\' && i + 1 < text.length) {
      word = (word ?? '') + (text[i + 1] ?? '');
      i++;
    } else if (/\s/.test(c)) {
      endWord();
    } else if (c === '&' && (text[i - 1] === '>' || text[i + 1] === '>')) {
      word = (word ?? '') + c; // a redirection: 2>&1, &>file
    } else if (c === '&' || c === '|' || c === ';' || c === '(' || c === ')') {
      if ((c === '&' || c === '|') && text[i + 1] === c) i++;
      endCommand();
    } else {
      word = (word ?? '') + c;
    }
  }
  endCommand();
  return commands;
}
