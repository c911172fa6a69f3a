/**
 * Source checks and gas injection for the `fast` engine (see fast.ts for the whole design).
 *
 * The policy source is parsed once with acorn (as a script) and rewritten by splicing text at node
 * positions; no code generator is involved, so the user's own text (and its line numbers) survive. The
 * rewrite:
 *
 * - rejects constructs the engine does not run: `import`/`export` (a script cannot contain them), dynamic
 *   `import()` and `import.meta`, `async` functions of every shape, generators, `await`, `for await`,
 *   regular-expression literals (catastrophic backtracking is time no gas counter sees), BigInt literals
 *   (one BigInt operation can take seconds and gigabytes), destructuring catch parameters, `with`,
 *   `debugger`, and every identifier that starts with `__` other than `__host` (the names of the injected
 *   gas counter and helpers);
 * - injects one gas check at the top of every loop body (non-block bodies are wrapped in braces) and at the
 *   entry of every function, arrow, method, getter, setter and class constructor (an expression-bodied arrow
 *   becomes `{ check; return (expr); }`), so that every unbounded path pays gas: iteration needs a loop
 *   and recursion needs a function entry; a function body also counts its call depth (at most
 *   {@link MAX_CALL_DEPTH}, undone in a finally);
 * - starts every catch block with `__r(e)` and every finally block with `__f()` (a try without a handler
 *   gets one that calls `__r` and rethrows), so a stack end is neither caught nor observed;
 * - wraps every `+`, `+=` and untagged template literal with `__a(...)`, which charges a long string result
 *   at its flattened size;
 * - routes every spread (`[...a]`, `f(...a)`, `new C(...a)`, `{...o}`) and the right-hand side of a
 *   destructuring with a top-level rest element through accounting helpers that charge the copied length
 *   against the memory budget.
 *
 * The result is the body of an arrow function (see {@link wrapProgram}) that receives the helpers as
 * parameters, so user code can neither name nor shadow them.
 */
import { parse } from 'acorn';

/** What the rewrite found wrong; fast.ts turns it into a SandboxError of the same kind. */
export class RewriteError extends Error {
  constructor(
    readonly kind: 'syntax' | 'forbidden',
    message: string,
  ) {
    super(message);
    this.name = 'RewriteError';
  }
}

/** The injected check: decrement the program's gas counter, throw the budget error when it runs out. */
export const GAS_CHECK = 'if(--__g<0)__o();';

/**
 * Deepest nesting of user function calls in one call into the program. It is counted by the rewrite (so it
 * is the same on every thread, whatever its stack size) and is far below V8's own limit for ordinary frames,
 * so user recursion never reaches the host stack: it fails with `stack` at exactly this depth.
 */
export const MAX_CALL_DEPTH = 400;
/** Function-entry prologue: the gas check, then the depth count, undone by a finally however the body exits. */
const ENTRY_OPEN = `${GAS_CHECK}if(++__d>${MAX_CALL_DEPTH})__k();try{`;
const ENTRY_CLOSE = '}finally{__d--;}';

interface AstNode {
  readonly type: string;
  readonly start: number;
  readonly end: number;
  readonly [key: string]: unknown;
}

interface Edit {
  readonly pos: number;
  /** 0 closes a node (inner first), 1 is a point insert, 2 opens a node (outer first). */
  readonly cls: 0 | 1 | 2;
  readonly depth: number;
  readonly text: string;
}

export interface RewriteResult {
  /** The rewritten source, same line count as the input. */
  readonly code: string;
  /** Names declared at the top level (function, class, var, let, const). */
  readonly declared: ReadonlySet<string>;
}

function isNode(v: unknown): v is AstNode {
  return typeof v === 'object' && v !== null && typeof (v as { type?: unknown }).type === 'string';
}

const LOOPS = new Set(['ForStatement', 'ForInStatement', 'ForOfStatement', 'WhileStatement', 'DoWhileStatement']);
const FUNCTIONS = new Set(['FunctionDeclaration', 'FunctionExpression', 'ArrowFunctionExpression']);

/** Parses and rewrites `source`; throws {@link RewriteError}. */
export function rewriteSource(source: string): RewriteResult {
  let program: AstNode;
  try {
    program = parse(source, { ecmaVersion: 2023, sourceType: 'script', preserveParens: true, allowHashBang: false }) as unknown as AstNode;
  } catch (e) {
    throw new RewriteError('syntax', e instanceof Error ? e.message : String(e));
  }
  const edits: Edit[] = [];
  const open = (pos: number, depth: number, text: string) => edits.push({ pos, cls: 2, depth, text });
  const close = (pos: number, depth: number, text: string) => edits.push({ pos, cls: 0, depth, text });
  const point = (pos: number, depth: number, text: string) => edits.push({ pos, cls: 1, depth, text });
  const forbid = (node: AstNode, what: string): never => {
    throw new RewriteError('forbidden', `${what} ${where(source, node.start)} is not supported by the fast sandbox`);
  };

  /** A loop or function body gets a gas check at its top; a non-block body is wrapped in braces. */
  const checkBody = (body: AstNode, depth: number, isArrowExpression: boolean) => {
    if (body.type === 'BlockStatement') point(body.start + 1, depth, GAS_CHECK);
    else if (isArrowExpression) {
      open(body.start, depth, `{${ENTRY_OPEN}return `);
      close(body.end, depth, `;${ENTRY_CLOSE}}`);
    } else {
      open(body.start, depth, `{${GAS_CHECK}`);
      close(body.end, depth, '}');
    }
  };
  const wrapCall = (node: AstNode, depth: number, helper: string) => {
    open(node.start, depth, `${helper}(`);
    close(node.end, depth, ')');
  };
  const hasTopRest = (pattern: unknown): boolean => {
    if (!isNode(pattern)) return false;
    const items = pattern.type === 'ArrayPattern' ? pattern['elements'] : pattern.type === 'ObjectPattern' ? pattern['properties'] : null;
    return Array.isArray(items) && items.some((el) => isNode(el) && el.type === 'RestElement');
  };

  const visit = (node: AstNode, parent: AstNode | null, key: string, depth: number): void => {
    switch (node.type) {
      case 'ImportExpression':
        forbid(node, 'dynamic import()');
        break;
      case 'MetaProperty':
        if ((node['meta'] as AstNode & { name: string }).name === 'import') forbid(node, 'import.meta');
        break;
      case 'AwaitExpression':
        forbid(node, 'await');
        break;
      case 'YieldExpression':
        forbid(node, 'yield');
        break;
      case 'WithStatement':
        forbid(node, 'with');
        break;
      case 'DebuggerStatement':
        forbid(node, 'debugger');
        break;
      case 'Literal':
        if (node['regex'] !== undefined) forbid(node, 'a regular expression literal');
        if (node['bigint'] !== undefined) forbid(node, 'a BigInt literal');
        break;
      case 'BinaryExpression':
        if (node['operator'] === '+') wrapCall(node, depth + 1, '__a');
        break;
      case 'TemplateLiteral':
        if ((node['expressions'] as unknown[]).length > 0 && parent?.type !== 'TaggedTemplateExpression') wrapCall(node, depth + 1, '__a');
        break;
      case 'TryStatement': {
        // A stack overflow must not be observable: every handler first lets __r see what was thrown (a host
        // stack overflow or the depth limit ends the call; user code never runs after it), and every finally
        // block first asks __f whether the call is ending that way.
        const handler = node['handler'] as AstNode | null;
        const finalizer = node['finalizer'] as AstNode | null;
        if (handler !== null) {
          const param = handler['param'] as AstNode | null;
          const hbody = handler['body'] as AstNode;
          if (param === null) {
            point(hbody.start, depth + 1, '(__e)');
            point(hbody.start + 1, depth + 1, '__r(__e);');
          } else if (param.type === 'Identifier') {
            point(hbody.start + 1, depth + 1, `__r(${param['name'] as string});`);
          } else {
            forbid(param, 'a destructuring catch parameter (bind the error to a name)');
          }
        } else {
          point((node['block'] as AstNode).end, depth + 1, 'catch(__e){__r(__e);throw __e;}');
        }
        if (finalizer !== null) point(finalizer.start + 1, depth + 1, '__f();');
        break;
      }
      case 'Identifier':
        checkIdentifier(node, parent, key);
        break;
      case 'ForOfStatement':
        if (node['await'] === true) forbid(node, 'for await');
        break;
      case 'SpreadElement':
        if (parent !== null && (parent.type === 'ArrayExpression' || parent.type === 'CallExpression' || parent.type === 'NewExpression')) {
          wrapCall(node['argument'] as AstNode, depth + 1, '__s');
        } else if (parent !== null && parent.type === 'ObjectExpression') {
          wrapCall(node['argument'] as AstNode, depth + 1, '__so');
        }
        break;
      case 'VariableDeclarator':
        if (hasTopRest(node['id']) && isNode(node['init'])) wrapCall(node['init'], depth + 1, restHelper(node['id']));
        break;
      case 'AssignmentExpression':
        if (node['operator'] === '=' && hasTopRest(node['left'])) wrapCall(node['right'] as AstNode, depth + 1, restHelper(node['left']));
        if (node['operator'] === '+=') wrapCall(node, depth + 1, '__a');
        break;
      default:
        break;
    }
    if (FUNCTIONS.has(node.type)) {
      if (node['async'] === true) forbid(node, 'an async function');
      if (node['generator'] === true) forbid(node, 'a generator function');
      const body = node['body'] as AstNode;
      if (body.type === 'BlockStatement') {
        // Points, not open/close: an empty body has both at one position, and points keep insertion order.
        point(body.start + 1, depth + 1, ENTRY_OPEN);
        point(body.end - 1, depth + 1, ENTRY_CLOSE);
      } else {
        checkBody(body, depth + 1, true);
      }
    } else if (LOOPS.has(node.type)) {
      checkBody(node['body'] as AstNode, depth + 1, false);
    }
    for (const k of Object.keys(node)) {
      const v = node[k];
      if (Array.isArray(v)) {
        for (const item of v) if (isNode(item)) visit(item, node, k, depth + 2);
      } else if (isNode(v)) {
        visit(v, node, k, depth + 2);
      }
    }
  };
  const checkIdentifier = (node: AstNode, parent: AstNode | null, key: string) => {
    const name = node['name'] as string;
    if (!name.startsWith('__') || name === '__host' || parent === null) return;
    const notAReference =
      (parent.type === 'MemberExpression' && key === 'property' && parent['computed'] !== true) ||
      ((parent.type === 'Property' || parent.type === 'MethodDefinition' || parent.type === 'PropertyDefinition') && key === 'key' && parent['computed'] !== true && parent['shorthand'] !== true) ||
      ((parent.type === 'LabeledStatement' || parent.type === 'BreakStatement' || parent.type === 'ContinueStatement') && key === 'label');
    if (!notAReference) forbid(node, `the identifier ${name} (names starting with __ are reserved)`);
  };

  visit(program, null, '', 0);
  return { code: applyEdits(source, edits), declared: topLevelNames(program) };
}

function restHelper(pattern: unknown): string {
  return isNode(pattern) && pattern.type === 'ObjectPattern' ? '__so' : '__s';
}

function applyEdits(source: string, edits: Edit[]): string {
  edits.sort((a, b) => a.pos - b.pos || a.cls - b.cls || (a.cls === 0 ? b.depth - a.depth : a.depth - b.depth));
  const parts: string[] = [];
  let at = 0;
  for (const e of edits) {
    parts.push(source.slice(at, e.pos), e.text);
    at = e.pos;
  }
  parts.push(source.slice(at));
  return parts.join('');
}

function topLevelNames(program: AstNode): Set<string> {
  const names = new Set<string>();
  const addPattern = (p: unknown): void => {
    if (!isNode(p)) return;
    switch (p.type) {
      case 'Identifier':
        names.add(p['name'] as string);
        break;
      case 'ObjectPattern':
        for (const prop of p['properties'] as AstNode[]) addPattern(prop.type === 'RestElement' ? prop['argument'] : prop['value']);
        break;
      case 'ArrayPattern':
        for (const el of p['elements'] as unknown[]) addPattern(el);
        break;
      case 'RestElement':
        addPattern(p['argument']);
        break;
      case 'AssignmentPattern':
        addPattern(p['left']);
        break;
      default:
        break;
    }
  };
  for (const stmt of program['body'] as AstNode[]) {
    if ((stmt.type === 'FunctionDeclaration' || stmt.type === 'ClassDeclaration') && isNode(stmt['id'])) names.add(stmt['id']['name'] as string);
    else if (stmt.type === 'VariableDeclaration') for (const d of stmt['declarations'] as AstNode[]) addPattern(d['id']);
  }
  return names;
}

/** "at line L, column C" (1-based) for an offset. */
function where(source: string, offset: number): string {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < offset; i++) {
    if (source.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  return `at line ${line}, column ${offset - lineStart + 1}`;
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
const RESERVED = new Set(
  ('break case catch class const continue debugger default delete do else enum export extends false finally for function if import in ' +
    'instanceof new null return super switch this throw true try typeof var void while with yield let static implements interface ' +
    'package private protected public await arguments eval undefined NaN Infinity').split(' '),
);

/** Whether `name` can be an entry point: a plain identifier the wrapper can reference by name. */
export function isEntryName(name: string): boolean {
  return IDENTIFIER.test(name) && !RESERVED.has(name) && !name.startsWith('__');
}

/**
 * The script text evaluated in the realm: an arrow taking the helpers, holding the gas counter, and running
 * the rewritten user code in an inner arrow that returns the entry points. Line 1 of the user code stays
 * line 1 (the prefix has no line break).
 */
export function wrapProgram(code: string, entrypoints: readonly string[]): string {
  const entries = entrypoints.map((n) => `typeof ${n}==='function'?${n}:null`).join(',');
  return (
    `((__o,__s,__so,__host,__link,__a,__k,__r,__f)=>{'use strict';let __g=0,__d=0;` +
    `__link(()=>__g,(n)=>{__g=n;},(n)=>{if((__g-=n)<0)__o();},()=>{__d=0;});` +
    `return (()=>{${code}\n;return [${entries}];})();})`
  );
}
