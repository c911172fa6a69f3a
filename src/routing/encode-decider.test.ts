import { describe, expect, it } from 'vitest';
import { Request } from '../domain/request.js';
import { ENCODE_DECIDERS, isEncodeDecider, isMultimodal, makeEncodeDecider } from './encode-decider.js';

function req(image = 0, audio = 0, video = 0): Request {
  const r = new Request('r', Int32Array.from([1, 2, 3]), Int32Array.from([4]), 0, 1);
  r.imageTokens = image;
  r.audioTokens = audio;
  r.videoTokens = video;
  return r;
}

describe('encode deciders (reference NeverEncode, AlwaysEncode, MultimodalEncodeDecider)', () => {
  it('multimodal encodes a request with any image, audio or video tokens, and never a text-only one', () => {
    const d = makeEncodeDecider('multimodal');
    expect(d.shouldEncode(req(), 'instance_1')).toBe(false);
    expect(d.shouldEncode(req(1), 'instance_1')).toBe(true);
    expect(d.shouldEncode(req(0, 5), 'instance_1')).toBe(true);
    expect(d.shouldEncode(req(0, 0, 9), 'instance_1')).toBe(true);
    expect(isMultimodal(req(0, 0, 0))).toBe(false);
  });
  it('never and "" never encode; always always does', () => {
    expect(makeEncodeDecider('never').shouldEncode(req(5), 'x')).toBe(false);
    expect(makeEncodeDecider('').shouldEncode(req(5), 'x')).toBe(false);
    expect(makeEncodeDecider('always').shouldEncode(req(), 'x')).toBe(true);
  });
  it('an unknown name is refused with the sorted valid names', () => {
    expect(() => makeEncodeDecider('sometimes')).toThrow('Unknown encode decider "sometimes". Valid: always, multimodal, never');
    expect(isEncodeDecider('multimodal')).toBe(true);
    expect(isEncodeDecider('sometimes')).toBe(false);
    expect([...ENCODE_DECIDERS]).toEqual(['never', 'always', 'multimodal']);
  });
});
