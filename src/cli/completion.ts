/**
 * `blis completion bash|zsh|fish`: a completion script generated from the command tree (subcommands and the long
 * flags of every command), printed on stdout.
 */
import type { Command } from 'commander';

export const SHELLS = ['bash', 'zsh', 'fish'] as const;
export type Shell = (typeof SHELLS)[number];

interface Node {
  /** "" for blis itself, "convert preset" for a nested command. */
  readonly path: string;
  readonly subcommands: readonly string[];
  readonly flags: readonly { readonly name: string; readonly help: string }[];
}

/** Every command of the tree with its subcommands and visible long flags (help and version included). */
export function commandTree(root: Command): Node[] {
  const out: Node[] = [];
  const walk = (cmd: Command, path: string): void => {
    const subs = cmd.commands.filter((c) => c.name() !== 'help');
    const flags = cmd.options.filter((o) => !o.hidden && o.long !== undefined).map((o) => ({ name: (o.long as string).slice(2), help: o.description }));
    out.push({ path, subcommands: subs.map((c) => c.name()), flags: [...flags, { name: 'help', help: 'display help for command' }] });
    for (const s of subs) walk(s, path === '' ? s.name() : `${path} ${s.name()}`);
  };
  walk(root, '');
  return out;
}

const sq = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

function words(n: Node): string {
  return [...n.subcommands, ...n.flags.map((f) => `--${f.name}`)].join(' ');
}

function bash(nodes: readonly Node[]): string {
  const paths = nodes.filter((n) => n.path !== '').map((n) => sq(n.path)).join('|');
  return `# blis completion for bash: source it, or save it as ~/.local/share/bash-completion/completions/blis
_blis() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" cmdpath="" w i
  for ((i = 1; i < COMP_CWORD; i++)); do
    w="\${COMP_WORDS[i]}"
    [[ "$w" == -* ]] && continue
    case "\${cmdpath:+$cmdpath }$w" in
      ${paths}) cmdpath="\${cmdpath:+$cmdpath }$w" ;;
    esac
  done
  local words=""
  case "$cmdpath" in
${nodes.map((n) => `    ${sq(n.path)}) words=${sq(words(n))} ;;`).join('\n')}
  esac
  COMPREPLY=($(compgen -W "$words" -- "$cur"))
}
complete -o default -F _blis blis
`;
}

function zsh(nodes: readonly Node[]): string {
  const paths = nodes.filter((n) => n.path !== '').map((n) => sq(n.path)).join('|');
  return `#compdef blis
# blis completion for zsh: save it as _blis in a directory of $fpath, or source it after compinit
_blis() {
  local cmdpath="" w i
  for (( i = 2; i < CURRENT; i++ )); do
    w=\${words[i]}
    [[ $w == -* ]] && continue
    case "\${cmdpath:+$cmdpath }$w" in
      (${paths}) cmdpath="\${cmdpath:+$cmdpath }$w" ;;
    esac
  done
  local -a opts
  case "$cmdpath" in
${nodes.map((n) => `    (${sq(n.path)}) opts=(${words(n)}) ;;`).join('\n')}
  esac
  if [[ $PREFIX == -* ]]; then
    compadd -- \${(M)opts:#-*}
  else
    compadd -- \${opts:#-*}
    _files
  fi
}
if [[ "\${funcstack[1]}" == _blis ]]; then _blis "$@"; else compdef _blis blis; fi
`;
}

function fish(nodes: readonly Node[]): string {
  const lines = ['# blis completion for fish: save it as ~/.config/fish/completions/blis.fish'];
  const cond = (path: string, children: readonly string[]): string => {
    const parts = path === '' ? [] : path.split(' ');
    const seen = parts.map((p) => `__fish_seen_subcommand_from ${p}`);
    if (path === '') seen.push('__fish_use_subcommand');
    else if (children.length > 0) seen.push(`not __fish_seen_subcommand_from ${children.join(' ')}`);
    return seen.join('; and ');
  };
  for (const n of nodes) {
    for (const s of n.subcommands) lines.push(`complete -c blis -n ${sq(cond(n.path, n.subcommands))} -f -a ${sq(s)}`);
    for (const f of n.flags) lines.push(`complete -c blis -n ${sq(cond(n.path, n.subcommands))} -l ${f.name} -d ${sq(f.help.slice(0, 80))}`);
  }
  return `${lines.join('\n')}\n`;
}

/** The completion script of `shell` for the tree under `root`. */
export function completionScript(root: Command, shell: Shell): string {
  const nodes = commandTree(root);
  return shell === 'bash' ? bash(nodes) : shell === 'zsh' ? zsh(nodes) : fish(nodes);
}
