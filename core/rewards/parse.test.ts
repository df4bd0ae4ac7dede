import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { evaluate, FormulaError, parseFormula } from './parse.js';
import { expandPreset, REWARD_PRESETS } from './presets.js';

const ev = (f: string, vars: Record<string, number> = {}) => evaluate(parseFormula(expandPreset(f)), vars);
const close = (a: number, b: number) => assert.ok(Math.abs(a - b) < 1e-12, `${a} != ${b}`);

test('SandMLE paper preset: format+execute+median = 0.5', () => {
  close(ev('sandmle-paper', { format: 1, execute: 1, median: 1 }), 0.5);
  close(ev(REWARD_PRESETS['sandmle-paper'], { format: 1, execute: 1, median: 1, bronze: 1, silver: 1, gold: 1 }), 1);
});

test('released-code preset takes the best milestone, not the sum', () => {
  close(ev('sandmle-code', { format: 1, execute: 1, median: 1, bronze: 1, silver: 1 }), 0.1 + 0.2 + 0.6);
  close(ev('sandmle-code', { format: 0, execute: 1, median: 1 }), 0.3);
});

test('sparse and mltoolbench presets', () => {
  close(ev('sparse', { format: 1, gold: 1 }), 1);
  close(ev('sparse', { format: 1, silver: 1 }), 0.1);
  assert.is(ev('mltoolbench', { success: 1 }), 1);
});

test('precedence, unary minus, parentheses', () => {
  assert.is(ev('1 + 2 * 3'), 7);
  assert.is(ev('(1 + 2) * 3'), 9);
  assert.is(ev('-2 * -3'), 6);
  assert.is(ev('10 - 4 - 3'), 3);
  assert.is(ev('8 / 4 / 2'), 1);
  assert.is(ev('2e-1 * 10'), 2);
});

test('comparisons give 1 or 0; if, clip, min, max', () => {
  assert.is(ev('score > 0.5', { score: 0.7 }), 1);
  assert.is(ev('score <= 0.5', { score: 0.7 }), 0);
  assert.is(ev('if(timed_out == 1, -1, gold)', { timed_out: 1, gold: 1 }), -1);
  assert.is(ev('if(timed_out == 1, -1, gold)', { gold: 1 }), 1);
  assert.is(ev('clip(improvement, 0, 1)', { improvement: 3 }), 1);
  assert.is(ev('clip(improvement, 0, 1)', { improvement: -3 }), 0);
  assert.is(ev('min(3, turns, 5)', { turns: 1 }), 1);
  assert.is(ev('max(0.7*gold, 0.6*silver)', { silver: 1 }), 0.6);
});

test('valid is another name for execute; division by zero is 0', () => {
  assert.is(ev('valid', { execute: 1 }), 1);
  assert.is(ev('execute', { valid: 1 }), 1);
  assert.is(ev('gold / turns'), 0);
});

function errorAt(f: string): { offset: number; message: string } {
  try {
    parseFormula(f);
  } catch (err) {
    assert.instance(err, FormulaError);
    return { offset: (err as FormulaError).offset, message: (err as Error).message };
  }
  throw new Error(`no error for ${f}`);
}

test('errors carry the offset of the offending token', () => {
  assert.equal(errorAt('0.1*format + 0.3*exec').offset, 17);
  assert.match(errorAt('0.1*format + 0.3*exec').message, 'unknown variable "exec"');
  assert.equal(errorAt('1 + (2 * 3').offset, 10);
  assert.match(errorAt('sqrt(gold)').message, 'unknown function');
  assert.match(errorAt('clip(gold, 1)').message, 'clip() takes 3 arguments');
  assert.equal(errorAt('gold $ 1').offset, 5);
  assert.equal(errorAt('gold gold').offset, 5);
  assert.match(errorAt('').message, 'ends too early');
});

test('deep nesting and long chains are refused with a position, not a stack overflow', () => {
  const deep = '('.repeat(3000) + 'gold' + ')'.repeat(3000);
  const e = errorAt(deep);
  assert.match(e.message, 'nested more than 100 levels deep');
  assert.is(e.offset, 100, 'at the first parenthesis past the limit');
  assert.match(errorAt('-'.repeat(5000) + 'gold').message, 'nested more than 100 levels deep');
  assert.match(errorAt('max('.repeat(500) + 'gold' + ')'.repeat(500)).message, 'nested more than 100 levels deep');
  const long = errorAt(Array.from({ length: 100_000 }, () => 'gold').join(' + '));
  assert.match(long.message, 'more than 1000 operators');
  // Up to the limits, formulas still parse and evaluate.
  assert.is(ev('('.repeat(100) + '1' + ')'.repeat(100)), 1);
  assert.is(ev(Array.from({ length: 1000 }, () => '1').join(' + ')), 1000);
});

test.run();
