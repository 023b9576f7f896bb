// A small Dockerfile reader: enough to check what our Dockerfiles declare (stages, FROM, COPY, USER,
// EXPOSE, ENV, HEALTHCHECK, CMD) without a Docker engine. Not a full BuildKit parser: no ARG
// expansion in FROM, no heredocs.

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
      if (keyword === 'ARG') continue; // ARG before the first FROM
      throw new Error(`line ${line}: ${keyword} before FROM`);
    }
    stage.instructions.push({ keyword, flags, args: rest, line });
  }
  return { stages };
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
