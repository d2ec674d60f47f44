/**
 * DynamoDB's expression languages, evaluated in memory for the simulated table
 * (`simulated-dynamo.ts`): condition and filter expressions, key conditions, update expressions
 * and projections, with `#name` and `:value` placeholders, as the DynamoDB Developer Guide
 * defines them ("Condition and filter expressions, operators, and functions", "Update
 * expressions", "Projection expressions"). Values are the SDK's `AttributeValue` shapes.
 *
 * Comparison follows DynamoDB: numbers numerically, strings by their UTF-8 bytes, binary by
 * bytes; values of different types never compare (the condition is false). Paths are a name
 * with `.member` and `[index]` parts. What the relay never writes (sets' `DELETE`, binary
 * arithmetic) is refused with an error rather than guessed.
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { copied } from '../kernel/copy.ts';

export type Item = Record<string, AttributeValue>;

export interface Placeholders {
  names?: Record<string, string> | undefined;
  values?: Record<string, AttributeValue> | undefined;
}

/** A malformed expression or a placeholder it does not define: DynamoDB's ValidationException. */
export class ExpressionError extends Error {
  override readonly name = 'ValidationException';
}

type PathPart = string | number;
type Operand = { kind: 'path'; path: PathPart[] } | { kind: 'value'; value: AttributeValue } | { kind: 'call'; name: string; args: Operand[] } | { kind: 'arith'; op: '+' | '-'; left: Operand; right: Operand };
type Condition =
  | { kind: 'compare'; op: '=' | '<>' | '<' | '<=' | '>' | '>='; left: Operand; right: Operand }
  | { kind: 'between'; subject: Operand; low: Operand; high: Operand }
  | { kind: 'in'; subject: Operand; options: Operand[] }
  | { kind: 'function'; call: Extract<Operand, { kind: 'call' }> }
  | { kind: 'and' | 'or'; left: Condition; right: Condition }
  | { kind: 'not'; inner: Condition };

/* ----------------------------------------------------------------------------- tokens */

type Token = { kind: 'word' | 'name' | 'value' | 'number' | 'symbol'; text: string };

/** The relay writes a few dozen distinct expressions, each tens of thousands of times a run: tokenized once. */
const tokenized = new Map<string, readonly Token[]>();

function tokenize(expression: string): readonly Token[] {
  const known = tokenized.get(expression);
  if (known !== undefined) return known;
  const tokens = tokenizeAfresh(expression);
  if (tokenized.size >= 10_000) tokenized.clear();
  tokenized.set(expression, tokens);
  return tokens;
}

function tokenizeAfresh(expression: string): Token[] {
  const tokens: Token[] = [];
  let index = 0;
  while (index < expression.length) {
    const char = expression[index] as string;
    if (/\s/.test(char)) {
      index += 1;
      continue;
    }
    const two = expression.slice(index, index + 2);
    if (two === '<=' || two === '>=' || two === '<>') {
      tokens.push({ kind: 'symbol', text: two });
      index += 2;
      continue;
    }
    if ('=<>(),.[]+-'.includes(char)) {
      tokens.push({ kind: 'symbol', text: char });
      index += 1;
      continue;
    }
    const match = /^[#:]?[A-Za-z0-9_]+/.exec(expression.slice(index));
    if (match === null) throw new ExpressionError(`unexpected character ${JSON.stringify(char)} in ${JSON.stringify(expression)}`);
    const text = match[0];
    tokens.push({ kind: text.startsWith('#') ? 'name' : text.startsWith(':') ? 'value' : /^[0-9]+$/.test(text) ? 'number' : 'word', text });
    index += text.length;
  }
  return tokens;
}

class Parser {
  private position = 0;

  constructor(
    private readonly tokens: readonly Token[],
    private readonly placeholders: Placeholders,
    private readonly source: string,
  ) {}

  done(): boolean {
    return this.position >= this.tokens.length;
  }

  peek(offset = 0): Token | undefined {
    return this.tokens[this.position + offset];
  }

  take(): Token {
    const token = this.tokens[this.position];
    if (token === undefined) throw new ExpressionError(`unexpected end of ${JSON.stringify(this.source)}`);
    this.position += 1;
    return token;
  }

  expect(text: string): void {
    const token = this.take();
    if (token.text !== text) throw new ExpressionError(`expected ${text}, found ${token.text} in ${JSON.stringify(this.source)}`);
  }

  isWord(text: string, offset = 0): boolean {
    const token = this.peek(offset);
    return token?.kind === 'word' && token.text.toUpperCase() === text;
  }

  /* condition := disjunction */
  condition(): Condition {
    let left = this.conjunction();
    while (this.isWord('OR')) {
      this.take();
      left = { kind: 'or', left, right: this.conjunction() };
    }
    return left;
  }

  private conjunction(): Condition {
    let left = this.negation();
    while (this.isWord('AND')) {
      this.take();
      left = { kind: 'and', left, right: this.negation() };
    }
    return left;
  }

  private negation(): Condition {
    if (this.isWord('NOT')) {
      this.take();
      return { kind: 'not', inner: this.negation() };
    }
    return this.predicate();
  }

  private predicate(): Condition {
    if (this.peek()?.text === '(') {
      // A parenthesised condition, unless it is an operand such as `(a)`: DynamoDB needs no such operands here.
      this.take();
      const inner = this.condition();
      this.expect(')');
      return inner;
    }
    const subject = this.operand();
    const next = this.peek();
    if (next?.kind === 'symbol' && ['=', '<>', '<', '<=', '>', '>='].includes(next.text)) {
      this.take();
      return { kind: 'compare', op: next.text as '=' | '<>' | '<' | '<=' | '>' | '>=', left: subject, right: this.operand() };
    }
    if (this.isWord('BETWEEN')) {
      this.take();
      const low = this.operand();
      if (!this.isWord('AND')) throw new ExpressionError(`BETWEEN without AND in ${JSON.stringify(this.source)}`);
      this.take();
      return { kind: 'between', subject, low, high: this.operand() };
    }
    if (this.isWord('IN')) {
      this.take();
      this.expect('(');
      const options = [this.operand()];
      while (this.peek()?.text === ',') {
        this.take();
        options.push(this.operand());
      }
      this.expect(')');
      return { kind: 'in', subject, options };
    }
    if (subject.kind === 'call') return { kind: 'function', call: subject };
    throw new ExpressionError(`a condition expected in ${JSON.stringify(this.source)}`);
  }

  /* operand := call | :value | path */
  operand(): Operand {
    const token = this.peek();
    if (token === undefined) throw new ExpressionError(`unexpected end of ${JSON.stringify(this.source)}`);
    if (token.kind === 'value') {
      this.take();
      const value = this.placeholders.values?.[token.text];
      if (value === undefined) throw new ExpressionError(`value ${token.text} is not defined`);
      return { kind: 'value', value };
    }
    if (token.kind === 'word' && this.peek(1)?.text === '(') {
      this.take();
      this.take();
      const args: Operand[] = [];
      if (this.peek()?.text !== ')') {
        args.push(this.operand());
        while (this.peek()?.text === ',') {
          this.take();
          args.push(this.operand());
        }
      }
      this.expect(')');
      return { kind: 'call', name: token.text, args };
    }
    return { kind: 'path', path: this.path() };
  }

  /** An operand of a SET action: `a + b`, `a - b`, or one operand. */
  setValue(): Operand {
    const left = this.operand();
    const next = this.peek();
    if (next?.text === '+' || next?.text === '-') {
      this.take();
      return { kind: 'arith', op: next.text, left, right: this.operand() };
    }
    return left;
  }

  path(): PathPart[] {
    const parts: PathPart[] = [this.attributeName()];
    for (;;) {
      const next = this.peek();
      if (next?.text === '.') {
        this.take();
        parts.push(this.attributeName());
      } else if (next?.text === '[') {
        this.take();
        const index = this.take();
        if (index.kind !== 'number') throw new ExpressionError(`a list index expected in ${JSON.stringify(this.source)}`);
        parts.push(Number(index.text));
        this.expect(']');
      } else return parts;
    }
  }

  private attributeName(): string {
    const token = this.take();
    if (token.kind === 'name') {
      const name = this.placeholders.names?.[token.text];
      if (name === undefined) throw new ExpressionError(`name ${token.text} is not defined`);
      return name;
    }
    if (token.kind !== 'word') throw new ExpressionError(`an attribute name expected, found ${token.text} in ${JSON.stringify(this.source)}`);
    if (RESERVED.has(token.text.toUpperCase())) throw new ExpressionError(`${token.text} is a reserved word; use an expression attribute name`);
    return token.text;
  }
}

/** The reserved words the relay's attribute names could collide with (DynamoDB reserves ~570; these are the ones a name here might be). */
const RESERVED = new Set(['SOURCE', 'RAW', 'STATE', 'OWNER', 'NAME', 'COUNT', 'DATA', 'TYPE', 'STATUS', 'KEYS', 'SESSION', 'TIMESTAMP', 'TIME', 'VALUE', 'VALUES', 'USER', 'ZONE', 'SIZE', 'LIMIT', 'ORDER', 'TOKEN', 'DATE', 'STREAM']);

/* ----------------------------------------------------------------------------- values */

function utf8Compare(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

/** DynamoDB's ordering of two scalar values of one type; undefined when they do not compare. */
export function compareValues(a: AttributeValue | undefined, b: AttributeValue | undefined): number | undefined {
  if (a === undefined || b === undefined) return undefined;
  if (a.N !== undefined && b.N !== undefined) {
    const x = Number(a.N);
    const y = Number(b.N);
    return x < y ? -1 : x > y ? 1 : 0;
  }
  if (a.S !== undefined && b.S !== undefined) return Math.sign(utf8Compare(a.S, b.S));
  if (a.B !== undefined && b.B !== undefined) return Math.sign(Buffer.compare(Buffer.from(a.B), Buffer.from(b.B)));
  return undefined;
}

export function valuesEqual(a: AttributeValue | undefined, b: AttributeValue | undefined): boolean {
  if (a === undefined || b === undefined) return false;
  return JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));
}

function canonical(value: AttributeValue): unknown {
  if (value.N !== undefined) return { N: Number(value.N) };
  if (value.SS !== undefined) return { SS: [...value.SS].sort() };
  if (value.NS !== undefined) return { NS: value.NS.map(Number).sort((x, y) => x - y) };
  if (value.M !== undefined) return { M: Object.fromEntries(Object.entries(value.M).sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, v]) => [k, canonical(v)])) };
  if (value.L !== undefined) return { L: value.L.map(canonical) };
  if (value.B !== undefined) return { B: Buffer.from(value.B).toString('base64') };
  return value;
}

function resolvePath(item: Item | undefined, path: readonly PathPart[]): AttributeValue | undefined {
  let current: AttributeValue | undefined = item === undefined ? undefined : item[path[0] as string];
  for (const part of path.slice(1)) {
    if (current === undefined) return undefined;
    current = typeof part === 'number' ? current.L?.[part] : current.M?.[part];
  }
  return current;
}

function sizeOf(value: AttributeValue | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (value.S !== undefined) return Buffer.byteLength(value.S, 'utf8');
  if (value.B !== undefined) return Buffer.from(value.B).length;
  if (value.L !== undefined) return value.L.length;
  if (value.M !== undefined) return Object.keys(value.M).length;
  if (value.SS !== undefined) return value.SS.length;
  if (value.NS !== undefined) return value.NS.length;
  if (value.BS !== undefined) return value.BS.length;
  return undefined;
}

function evaluateOperand(operand: Operand, item: Item | undefined): AttributeValue | undefined {
  switch (operand.kind) {
    case 'value':
      return operand.value;
    case 'path':
      return resolvePath(item, operand.path);
    case 'arith': {
      const left = evaluateOperand(operand.left, item);
      const right = evaluateOperand(operand.right, item);
      if (left?.N === undefined || right?.N === undefined) throw new ExpressionError('an operand in an arithmetic expression is not a number');
      return { N: String(operand.op === '+' ? Number(left.N) + Number(right.N) : Number(left.N) - Number(right.N)) };
    }
    case 'call': {
      const [first, second] = operand.args;
      if (operand.name === 'size') {
        const size = sizeOf(first === undefined ? undefined : evaluateOperand(first, item));
        return size === undefined ? undefined : { N: String(size) };
      }
      if (operand.name === 'if_not_exists') {
        if (first?.kind !== 'path' || second === undefined) throw new ExpressionError('if_not_exists takes a path and a value');
        return resolvePath(item, first.path) ?? evaluateOperand(second, item);
      }
      if (operand.name === 'list_append') {
        const left = first === undefined ? undefined : evaluateOperand(first, item);
        const right = second === undefined ? undefined : evaluateOperand(second, item);
        if (left?.L === undefined || right?.L === undefined) throw new ExpressionError('list_append takes two lists');
        return { L: [...left.L, ...right.L] };
      }
      throw new ExpressionError(`${operand.name} is not a function that yields a value`);
    }
  }
}

function evaluateCondition(condition: Condition, item: Item | undefined): boolean {
  switch (condition.kind) {
    case 'and':
      return evaluateCondition(condition.left, item) && evaluateCondition(condition.right, item);
    case 'or':
      return evaluateCondition(condition.left, item) || evaluateCondition(condition.right, item);
    case 'not':
      return !evaluateCondition(condition.inner, item);
    case 'compare': {
      const left = evaluateOperand(condition.left, item);
      const right = evaluateOperand(condition.right, item);
      if (condition.op === '=') return valuesEqual(left, right);
      if (condition.op === '<>') return left !== undefined && right !== undefined && !valuesEqual(left, right);
      const order = compareValues(left, right);
      if (order === undefined) return false;
      return condition.op === '<' ? order < 0 : condition.op === '<=' ? order <= 0 : condition.op === '>' ? order > 0 : order >= 0;
    }
    case 'between': {
      const subject = evaluateOperand(condition.subject, item);
      const low = compareValues(subject, evaluateOperand(condition.low, item));
      const high = compareValues(subject, evaluateOperand(condition.high, item));
      return low !== undefined && high !== undefined && low >= 0 && high <= 0;
    }
    case 'in': {
      const subject = evaluateOperand(condition.subject, item);
      return condition.options.some((option) => valuesEqual(subject, evaluateOperand(option, item)));
    }
    case 'function': {
      const { name, args } = condition.call;
      const [first, second] = args;
      if (first === undefined) throw new ExpressionError(`${name} takes arguments`);
      if (name === 'attribute_exists' || name === 'attribute_not_exists') {
        if (first.kind !== 'path') throw new ExpressionError(`${name} takes a path`);
        const exists = resolvePath(item, first.path) !== undefined;
        return name === 'attribute_exists' ? exists : !exists;
      }
      if (name === 'begins_with') {
        const subject = evaluateOperand(first, item);
        const prefix = second === undefined ? undefined : evaluateOperand(second, item);
        if (subject?.S !== undefined && prefix?.S !== undefined) return Buffer.from(subject.S, 'utf8').subarray(0, Buffer.byteLength(prefix.S, 'utf8')).equals(Buffer.from(prefix.S, 'utf8'));
        return false;
      }
      if (name === 'contains') {
        const subject = evaluateOperand(first, item);
        const operand = second === undefined ? undefined : evaluateOperand(second, item);
        if (subject === undefined || operand === undefined) return false;
        if (subject.S !== undefined && operand.S !== undefined) return subject.S.includes(operand.S);
        if (subject.SS !== undefined && operand.S !== undefined) return subject.SS.includes(operand.S);
        if (subject.L !== undefined) return subject.L.some((member) => valuesEqual(member, operand));
        return false;
      }
      throw new ExpressionError(`${name} is not a condition function`);
    }
  }
}

/* ----------------------------------------------------------------------------- public */

function parse<T>(expression: string, placeholders: Placeholders, read: (parser: Parser) => T): T {
  const parser = new Parser(tokenize(expression), placeholders, expression);
  const result = read(parser);
  if (!parser.done()) throw new ExpressionError(`unexpected ${parser.peek()?.text} in ${JSON.stringify(expression)}`);
  return result;
}

/** Whether `item` (undefined: no item) satisfies a condition or filter expression. */
export function matchesCondition(expression: string | undefined, item: Item | undefined, placeholders: Placeholders): boolean {
  if (expression === undefined) return true;
  return evaluateCondition(parse(expression, placeholders, (parser) => parser.condition()), item);
}

/** A key condition: the partition key's value, and a test of the sort key. */
export interface KeyCondition {
  partition: AttributeValue;
  sortMatches: (sort: AttributeValue | undefined) => boolean;
}

export function parseKeyCondition(expression: string, placeholders: Placeholders, partitionKey: string, sortKey: string): KeyCondition {
  const condition = parse(expression, placeholders, (parser) => parser.condition());
  const parts: Condition[] = [];
  const flatten = (node: Condition): void => {
    if (node.kind === 'and') {
      flatten(node.left);
      flatten(node.right);
    } else parts.push(node);
  };
  flatten(condition);
  let partition: AttributeValue | undefined;
  let sortCondition: Condition | undefined;
  for (const part of parts) {
    const subject = part.kind === 'compare' ? part.left : part.kind === 'between' ? part.subject : part.kind === 'function' ? part.call.args[0] : undefined;
    const name = subject?.kind === 'path' && subject.path.length === 1 ? subject.path[0] : undefined;
    if (name === partitionKey && part.kind === 'compare' && part.op === '=' && part.right.kind === 'value') partition = part.right.value;
    else if (name === sortKey && sortCondition === undefined && (part.kind !== 'function' || part.call.name === 'begins_with') && part.kind !== 'in' && !(part.kind === 'compare' && part.op === '<>')) sortCondition = part;
    else throw new ExpressionError(`unsupported key condition ${JSON.stringify(expression)}`);
  }
  if (partition === undefined) throw new ExpressionError(`a key condition names the partition key with =: ${JSON.stringify(expression)}`);
  const test = sortCondition;
  return { partition, sortMatches: (sort) => test === undefined || evaluateCondition(test, sort === undefined ? undefined : { [sortKey]: sort }) };
}

/** Applies an update expression to a copy of `item` (an absent item starts empty). */
export function applyUpdate(expression: string, item: Item | undefined, placeholders: Placeholders): Item {
  const next: Item = copied(item ?? {});
  const parser = new Parser(tokenize(expression), placeholders, expression);
  // Every operand reads the item as it was before the update (DynamoDB evaluates all actions against the old item).
  const before = item;
  while (!parser.done()) {
    const clause = parser.take();
    if (clause.kind !== 'word') throw new ExpressionError(`an update clause expected in ${JSON.stringify(expression)}`);
    const keyword = clause.text.toUpperCase();
    do {
      if (keyword === 'SET') {
        const path = parser.path();
        parser.expect('=');
        const value = evaluateOperand(parser.setValue(), before);
        if (value === undefined) throw new ExpressionError(`the value for ${path.join('.')} names an attribute the item does not have`);
        assignPath(next, path, value);
      } else if (keyword === 'REMOVE') {
        removePath(next, parser.path());
      } else if (keyword === 'ADD') {
        const path = parser.path();
        const operand = parser.operand();
        const value = evaluateOperand(operand, before);
        const current = resolvePath(before, path);
        if (value?.N !== undefined) {
          if (current !== undefined && current.N === undefined) throw new ExpressionError('ADD of a number to a non-number');
          assignPath(next, path, { N: String(Number(current?.N ?? '0') + Number(value.N)) });
        } else if (value?.SS !== undefined) {
          assignPath(next, path, { SS: [...new Set([...(current?.SS ?? []), ...value.SS])] });
        } else throw new ExpressionError('ADD takes a number or a set');
      } else if (keyword === 'DELETE') {
        const path = parser.path();
        const value = evaluateOperand(parser.operand(), before);
        const current = resolvePath(next, path);
        if (value?.SS === undefined || current?.SS === undefined) throw new ExpressionError('DELETE takes a string set here');
        const left = current.SS.filter((member) => !value.SS?.includes(member));
        if (left.length === 0) removePath(next, path);
        else assignPath(next, path, { SS: left });
      } else throw new ExpressionError(`unknown update clause ${clause.text}`);
      if (parser.peek()?.text !== ',') break;
      parser.take();
    } while (!parser.done());
  }
  return next;
}

function assignPath(item: Item, path: readonly PathPart[], value: AttributeValue): void {
  if (path.length === 1) {
    item[path[0] as string] = copied(value);
    return;
  }
  const parent = resolvePath(item, path.slice(0, -1));
  const last = path[path.length - 1] as PathPart;
  if (typeof last === 'number' && parent?.L !== undefined) parent.L[Math.min(last, parent.L.length)] = copied(value);
  else if (typeof last === 'string' && parent?.M !== undefined) parent.M[last] = copied(value);
  else throw new ExpressionError(`the document path ${path.join('.')} does not exist`);
}

function removePath(item: Item, path: readonly PathPart[]): void {
  if (path.length === 1) {
    delete item[path[0] as string];
    return;
  }
  const parent = resolvePath(item, path.slice(0, -1));
  const last = path[path.length - 1] as PathPart;
  if (typeof last === 'number' && parent?.L !== undefined) parent.L.splice(last, 1);
  else if (typeof last === 'string' && parent?.M !== undefined) delete parent.M[last];
}

/** The item with only the projected attributes (top-level names; the relay projects no nested paths). */
export function project(item: Item, expression: string | undefined, placeholders: Placeholders): Item {
  if (expression === undefined) return item;
  const parser = new Parser(tokenize(expression), placeholders, expression);
  const projected: Item = {};
  for (;;) {
    const path = parser.path();
    const value = resolvePath(item, path.slice(0, 1));
    if (value !== undefined) projected[path[0] as string] = value;
    if (parser.done()) return projected;
    parser.expect(',');
  }
}

/** DynamoDB's item size: attribute names plus values (the rules of "Item sizes and formats"). */
export function itemSizeBytes(item: Item): number {
  let size = 0;
  for (const [name, value] of Object.entries(item)) size += Buffer.byteLength(name, 'utf8') + valueSize(value);
  return size;
}

function valueSize(value: AttributeValue): number {
  if (value.S !== undefined) return Buffer.byteLength(value.S, 'utf8');
  if (value.N !== undefined) return Math.ceil(value.N.replace(/^-/, '').replace(/^0+/, '').length / 2) + 1;
  if (value.B !== undefined) return Buffer.from(value.B).length;
  if (value.BOOL !== undefined || value.NULL !== undefined) return 1;
  if (value.SS !== undefined) return value.SS.reduce((sum, member) => sum + Buffer.byteLength(member, 'utf8'), 0);
  if (value.NS !== undefined) return value.NS.reduce((sum, member) => sum + Math.ceil(member.length / 2) + 1, 0);
  if (value.L !== undefined) return 3 + value.L.reduce((sum, member) => sum + 1 + valueSize(member), 0);
  if (value.M !== undefined) return 3 + Object.entries(value.M).reduce((sum, [name, member]) => sum + 1 + Buffer.byteLength(name, 'utf8') + valueSize(member), 0);
  return 0;
}
