import { describe, expect, it } from 'vitest';
import { checkLoraSchedule, instanceSchedule, parseLoraSchedule } from './lora-schedule.js';

describe('parseLoraSchedule (the placement-schedule grammar)', () => {
  it('reads entries, skips blanks and comments, sorts each instance\'s adapters', () => {
    const e = parseLoraSchedule('\uFEFF# arm 3\n\n0 0=b,a;1=c\r\n  10000000   1=d ; 0=e\n', 's.txt');
    expect(e.map((x) => [x.atUs, x.line, [...x.placement]])).toEqual([
      [0, 3, [[0, ['a', 'b']], [1, ['c']]]],
      [10_000_000, 4, [[1, ['d']], [0, ['e']]]],
    ]);
    expect(instanceSchedule(e, 1)).toEqual([{ atUs: 0, ids: ['c'] }, { atUs: 10_000_000, ids: ['d'] }]);
    expect(instanceSchedule(e, 2)).toEqual([]);
    expect(instanceSchedule(parseLoraSchedule('5 0=a\n9 1=b\n', 's'), 0)).toEqual([{ atUs: 5, ids: ['a'] }, { atUs: 9, ids: [] }]);
  });

  it.each([
    ['', 's.txt:1:1: the schedule has no entries'],
    ['0\n', 's.txt:1:1: want "<t_us> <instance>=<adapter>[,...][;...]"'],
    ['-1 0=a\n', 's.txt:1:1: time -1 is negative'],
    ['0.5 0=a\n', 's.txt:1:1: time "0.5" is not a whole number of microseconds'],
    ['10 0=a\n5 0=b\n', 's.txt:2:1: time 5 does not increase past line 1\'s 10'],
    ['0 ;\n', 's.txt:1:3: the entry places no adapter'],
    ['0 a\n', 's.txt:1:3: placement "a" has no "="'],
    ['0 0=a;0=b\n', 's.txt:1:7: instance 0 appears twice in one entry'],
    ['0 0=a,,b\n', 's.txt:1:3: instance 0: an empty adapter id'],
    ['0 0=a,a\n', 's.txt:1:3: instance 0: adapter "a" is listed twice'],
    ['0 0=a\u0000\n', 's.txt:1:6: the file holds binary data'],
  ])('refuses %j', (text, want) => {
    expect(() => parseLoraSchedule(text, 's.txt')).toThrow(want);
  });

  it('checks adapters, instance range and slots against the run', () => {
    const e = parseLoraSchedule('0 0=a\n7 1=a,b\n', 's.txt');
    expect(() => checkLoraSchedule(e, 's.txt', ['a', 'b'], 2, 2)).not.toThrow();
    expect(() => checkLoraSchedule(e, 's.txt', ['a', 'b'], 1, 2)).toThrow('s.txt:2:1: instance 1 is given 2 adapters but holds 1');
    expect(() => checkLoraSchedule(e, 's.txt', ['a', 'b'], 2, 1)).toThrow('s.txt:2:1: instance index 1 is out of range');
    expect(() => checkLoraSchedule(e, 's.txt', ['a'], 2, 2)).toThrow('s.txt:2:1: adapter "b" is not declared in --lora-config (declared: a)');
  });
});
